// dsh's foldTeam over a Lead log (a JSON array of session events), timed in-process.
//
//   team_fold_bench.mts <events.json> <lead id> <rounds>
//
// Prints {cpuMs: [...]} (process.cpuUsage, user + system) for each round: one full fold per round,
// after one warm-up fold that is not counted.
import { readFileSync } from 'node:fs'
import { foldTeam } from '@deepseek-ai/dsh-experimental-agent-team'
import type { SessionId } from '@deepseek-ai/dsh-session'

const [file, lead, rounds] = process.argv.slice(2)
const events = JSON.parse(readFileSync(file, 'utf8'))
foldTeam(lead as SessionId, events)
const cpuMs: number[] = []
for (let n = 0; n < Number(rounds); n++) {
  const before = process.cpuUsage()
  const state = foldTeam(lead as SessionId, events)
  const spent = process.cpuUsage(before)
  if (state.tasks.size === 0) throw new Error('empty fold')
  cpuMs.push((spent.user + spent.system) / 1000)
}
process.stdout.write(JSON.stringify({ cpuMs }) + '\n')
