// The JSON-lines loop the differential servers share: one request per input line, one answer per
// output line; an exception in `answer` becomes {"fatal": stack} so the Python side fails loudly.
import readline from 'node:readline';

export async function serve(answer) {
  const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  for await (const line of lines) {
    if (!line.trim()) continue;
    let reply;
    try {
      reply = answer(JSON.parse(line));
    } catch (error) { // a bug here must fail the test, not hang it
      reply = { fatal: String(error && error.stack) };
    }
    process.stdout.write(JSON.stringify(reply) + '\n');
  }
}
