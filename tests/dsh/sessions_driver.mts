// dsh's own session store and JSONL persistence, reading a sessions root (run by real_dsh.node_script).
//
//   sessions_driver.mts read <root> [zstd|none]
//   sessions_driver.mts keys <file.json>     # {"cwds": [...], "ids": [...]} -> dsh's directory names
//
// Prints one JSON document: for every session `list()` names, what dsh makes of it — the header from
// the listing and from `inspect()`, the event types, the history `Session.deriveMessages()` derives,
// the request header and context folds, the title, the permission knobs and the pending inbox — and
// then `load()` and `readRaw()` on it. A session dsh refuses is reported with dsh's message instead.
import { Context } from '@deepseek-ai/cordis'
import SessionStore, { Session } from '@deepseek-ai/dsh-session'
import type { SessionEvent } from '@deepseek-ai/dsh-session'
import JsonlSessionPersistence from '@deepseek-ai/dsh-session-persistence-jsonl'
import { Inbox } from '@deepseek-ai/dsh-agent'
import { foldSessionTitle } from '@deepseek-ai/dsh-session-title'
import { effectivePermissionPreset } from '@deepseek-ai/dsh-permission-presets'
import { effectiveSandboxMode } from '@deepseek-ai/dsh-sandbox-policy'
import { effectiveApprovalPolicy } from '@deepseek-ai/dsh-user-approval'
import { readFileSync } from 'node:fs'

const [mode, root, compression] = process.argv.slice(2)
if ((mode !== 'read' && mode !== 'keys') || root === undefined) {
  process.stderr.write('usage: sessions_driver.mts read <root> [zstd|none] | keys <file.json>\n')
  process.exit(2)
}
if (mode === 'keys') {
  // format.ts sits beside the package's entry module (its subpath is not mapped for scripts).
  const entry = import.meta.resolve('@deepseek-ai/dsh-session-persistence-jsonl')
  const { encodeSegment, projectKey } = await import(new URL('format.ts', entry).href) as {
    encodeSegment: (raw: string) => string; projectKey: (cwd: string) => string
  }
  // Inputs travel as UTF-16 code units so lone surrogates survive JSON on both sides.
  const input = JSON.parse(readFileSync(root, 'utf8')) as { cwds: number[][]; ids: number[][] }
  const text = (units: number[]) => String.fromCharCode(...units)
  const attempt = (fn: (s: string) => string, units: number[]) => {
    try { return fn(text(units)) } catch (error) { return { error: message(error) } }
  }
  process.stdout.write(JSON.stringify({
    projectKeys: input.cwds.map(units => attempt(projectKey, units)),
    segments: input.ids.map(units => attempt(encodeSegment, units)),
  }) + '\n')
  process.exit(0)
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

/** What dsh's own folds make of one stored log. */
function views(meta: Session['header'], events: readonly SessionEvent[]) {
  const session = Session.fromRestore(meta.id, structuredClone([...events]), structuredClone(meta))
  const quiet = { inserted() {}, discarded() {}, claimed() {} }
  const inbox = new Inbox(session, quiet)
  return {
    history: session.deriveMessages(),
    requestHeader: session.requestHeader() ?? null,
    requestContext: session.requestContext() ?? null,
    title: foldSessionTitle(session.events) ?? null,
    knobs: {
      preset: effectivePermissionPreset(session.events) ?? null,
      sandbox: effectiveSandboxMode(session.events) ?? null,
      approval: effectiveApprovalPolicy(session.events) ?? null,
    },
    inbox: { nextTurn: inbox.nextTurn.map(m => m.id), nextStep: inbox.nextStep.map(m => m.id) },
  }
}

const ctx = new Context()
await ctx.plugin(SessionStore)
const fiber = await ctx.plugin(JsonlSessionPersistence, {
  root, compression: compression === 'none' ? 'none' : 'zstd',
})
const persistence = ctx.sessionPersistence
const out: { listed: unknown[]; sessions: Record<string, unknown> } = { listed: [], sessions: {} }
const headers = await persistence.list()
out.listed = headers
for (const header of headers) {
  const report: Record<string, unknown> = {}
  try {
    const inspected = await persistence.inspect(header.id)
    report.meta = inspected.meta
    report.location = persistence.locate(inspected.meta)
    report.types = inspected.events.map(e => e.type)
    report.seqs = inspected.events.map(e => e.seq)
    Object.assign(report, views(inspected.meta, inspected.events))
    const loaded = await persistence.load(header.id)
    report.loadedEvents = loaded.events.length
    const raw = await persistence.readRaw(header.id)
    report.raw = raw === undefined ? null : { filename: raw.filename, lines: raw.content.split('\n').length - 1 }
  } catch (error) {
    report.error = message(error)
  }
  out.sessions[header.id] = report
}
await fiber.dispose()
process.stdout.write(JSON.stringify(out) + '\n')
