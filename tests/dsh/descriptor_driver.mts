// dsh's own fold of the durable subagent descriptor (run by real_dsh.node_script).
//
//   descriptor_driver.mts <payloads.json>
//
// For each payload: the descriptor dsh's foldSubagentDescriptor makes of a log holding it as a
// `subagent/descriptor` event — {"ok": <descriptor or null>} — or {"error": <dsh's message>}.
import { foldSubagentDescriptor } from '@deepseek-ai/dsh-subagent'
import type { SessionEvent } from '@deepseek-ai/dsh-session'
import { readFileSync } from 'node:fs'

const payloads = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as unknown[]
const out = payloads.map((data) => {
  const events = [{ type: 'subagent/descriptor', seq: 0, time: 0, data }] as unknown as SessionEvent[]
  try {
    return { ok: foldSubagentDescriptor(events) ?? null }
  } catch (error) {
    return { error: error instanceof Error ? error.message : String(error) }
  }
})
process.stdout.write(JSON.stringify(out) + '\n')
