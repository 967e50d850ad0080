// Many `dsh --profile P --dump-config …` invocations in one Node process, for tests/dsh/test_dump_vs_dsh.py.
//
// Each dsh run costs ~1 s of Node + tsx start-up; the dump itself takes milliseconds. This driver runs
// the same two calls dsh's bin.ts makes for a dump (parseDshArgs from apps/cli/src/args.ts, then
// runDumpConfig from apps/cli/src/dump-config.ts) once per invocation, with that invocation's
// DSH_HOME and working directory, and records what the real program would have written:
//   argv[2]: a JSON file holding [{"home": dir, "cwd": dir, "argv": ["--profile", "web", "--dump-config", ...]}, ...]
//   argv[3]: the JSON file it writes, [{"stdout": text, "stderr": text, "error": message | null}, ...]
// `error` is the thrown Error's message, which the CLI prints as `Error: <message>` above its stack
// (an uncaught throw, exit 1). test_dump_vs_dsh.py checks the driver against the CLI itself.
// Run with: RealDsh.node_script(this file, invocations.json) — dsh's packages resolve through TSX_TSCONFIG_PATH.
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'

const source = join(process.env.TSX_TSCONFIG_PATH ?? '', '..')
const { parseDshArgs } = await import(pathToFileURL(join(source, 'apps/cli/src/args.ts')).href)
const { runDumpConfig } = await import(pathToFileURL(join(source, 'apps/cli/src/dump-config.ts')).href)

interface Invocation { home: string; cwd: string; argv: string[] }
interface Outcome { stdout: string; stderr: string; error: string | null }

function runOne(invocation: Invocation): Outcome {
  const outcome: Outcome = { stdout: '', stderr: '', error: null }
  const writeOut = process.stdout.write.bind(process.stdout)
  const writeErr = process.stderr.write.bind(process.stderr)
  process.stdout.write = ((chunk: string | Uint8Array) => { outcome.stdout += String(chunk); return true }) as typeof process.stdout.write
  process.stderr.write = ((chunk: string | Uint8Array) => { outcome.stderr += String(chunk); return true }) as typeof process.stderr.write
  process.env.DSH_HOME = invocation.home
  process.chdir(invocation.cwd)
  try {
    const parsed = parseDshArgs(invocation.argv, '0.1.1-rc.2')
    if (parsed.mode !== 'dump-config') throw new Error(`dump_driver: not a dump invocation: ${JSON.stringify(parsed)}`)
    runDumpConfig(parsed.profile, parsed.defaultOnly, parsed.patches)
  } catch (error) {
    outcome.error = error instanceof Error ? error.message : String(error)
  } finally {
    process.stdout.write = writeOut
    process.stderr.write = writeErr
  }
  return outcome
}

const invocations = JSON.parse(readFileSync(process.argv[2] ?? '', 'utf8')) as Invocation[]
const outcomes = invocations.map(runOne)
writeFileSync(process.argv[3] ?? '', JSON.stringify(outcomes))
