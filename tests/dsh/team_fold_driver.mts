// dsh's own Agent Teams fold over a stored Lead log (run by real_dsh.node_script).
//
//   team_fold_driver.mts <sessions root> <lead session id>
//
// Prints {members, tasks, messages, delivered, nextTaskNumber} as dsh's `foldTeam` replays them from
// the log its JSONL persistence reads, or {error} when dsh refuses the log.
import { Context } from '@deepseek-ai/cordis'
import SessionStore from '@deepseek-ai/dsh-session'
import JsonlSessionPersistence from '@deepseek-ai/dsh-session-persistence-jsonl'
import { foldTeam } from '@deepseek-ai/dsh-experimental-agent-team'
import type { SessionId } from '@deepseek-ai/dsh-session'

const [root, leadId] = process.argv.slice(2)
const ctx = new Context()
await ctx.plugin(SessionStore)
const fiber = await ctx.plugin(JsonlSessionPersistence, { root, compression: 'zstd' })
let out: unknown
try {
  const inspected = await ctx.sessionPersistence.inspect(leadId as SessionId)
  const state = foldTeam(leadId as SessionId, inspected.events)
  out = {
    members: [...state.members.values()],
    tasks: [...state.tasks.values()],
    messages: [...state.messages.values()],
    delivered: [...state.delivered],
    nextTaskNumber: state.nextTaskNumber,
  }
} catch (error) {
  out = { error: error instanceof Error ? `${error.message}${error.cause ? `: ${String(error.cause)}` : ''}` : String(error) }
}
await fiber.dispose()
process.stdout.write(JSON.stringify(out) + '\n')
