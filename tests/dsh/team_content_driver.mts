// dsh's Agent Teams fold over one queued message per candidate content (run by real_dsh.node_script).
//
//   team_content_driver.mts <cases.json>
//
// <cases.json> is a JSON array of candidate `content` values. Prints a JSON array with, per candidate,
// null when dsh's `foldTeam` accepts a `team/message/queued` event carrying it, else the message of
// its refusal.
import { readFileSync } from 'node:fs'
import { foldTeam } from '@deepseek-ai/dsh-experimental-agent-team'
import type { SessionEvent, SessionId } from '@deepseek-ai/dsh-session'

const cases = JSON.parse(readFileSync(process.argv[2], 'utf8')) as unknown[]
const lead = 'lead-session' as SessionId
const out = cases.map((content, index) => {
  const event = {
    seq: 1, type: 'team/message/queued',
    data: { version: 1, teamId: lead, message: {
      id: `team-message-${index}`, senderId: lead, senderName: 'lead', targetId: 'member-session',
      delivery: 'quiet', content } },
  } as unknown as SessionEvent
  try {
    foldTeam(lead, [event])
    return null
  } catch (error) {
    return error instanceof Error ? error.message : String(error)
  }
})
process.stdout.write(JSON.stringify(out) + '\n')
