// JSON lines in, JSON lines out, for the dumper differential test (tests/test_emit_node.py).
//   {"values": [v, ...]}            -> {"dumps": [text | {"error": message}, ...]}
//   {"groups": [[label, rows], ...]} -> {"text": dsh's groupedDump text}
//   {"metadata": [v, ...]}          -> {"dumps": [preset.yml text, ...]}
//   {"texts": [yaml, ...], "schema"?: "default"}
//                                   -> {"loaded": [{"ok", "value"} | {"ok": false, "error"}]}
// Values arrive as JSON; {"$nonfinite": "NaN" | "Infinity" | "-Infinity"} stands for those numbers and
// {"__jsExpr": text} is dsh's in-memory !!js node. The schema and options are dsh's own
// (vendor/include/src/index.ts: JSON_SCHEMA + the JsExpr type; app-boot's groupedDump).
// Usage: node dump_server.mjs <directory holding node_modules/js-yaml>
import { createRequire } from 'node:module';
import path from 'node:path';
import { serve } from './jsonlines.mjs';

const require = createRequire(path.join(path.resolve(process.argv[2]), 'noop.js'));
const yaml = require('js-yaml');

const isJsExpr = (value) => value instanceof Object && '__jsExpr' in value;
const JsExpr = new yaml.Type('tag:yaml.org,2002:js', {
  kind: 'scalar',
  resolve: (data) => typeof data === 'string',
  construct: (data) => ({ __jsExpr: data }),
  predicate: isJsExpr,
  represent: (data) => data['__jsExpr'],
});
const schema = yaml.JSON_SCHEMA.extend(JsExpr);
const dump = (value) => yaml.dump(value, { schema, noRefs: true });

const revive = (key, v) => (v && typeof v === 'object' && !Array.isArray(v) &&
  Object.keys(v).length === 1 && typeof v.$nonfinite === 'string' ? Number(v.$nonfinite) : v);
const encode = (value) => JSON.stringify(value, (key, v) =>
  (typeof v === 'number' && !Number.isFinite(v) ? { $nonfinite: String(v) }
    : (typeof v === 'number' && Object.is(v, -0) ? { $nonfinite: '-0' } : v)));

function groupedDump(groups) {
  const lines = [];
  for (const [label, rows] of groups) {
    lines.push(`# == ${label}`);
    lines.push(dump(rows).trimEnd());
  }
  return lines.join('\n') + '\n';
}

function answer(request) {
  if (request.values) {
    return {
      dumps: request.values.map((text) => {
        try {
          return dump(JSON.parse(text, revive));
        } catch (error) {
          return { error: String(error.message).split('\n')[0] };
        }
      }),
    };
  }
  if (request.metadata) {
    // dsh's renderPresetMetadata (packages/preset/agent-presets/src/metadata.ts): default schema, no folding
    return { dumps: request.metadata.map((text) => yaml.dump(JSON.parse(text, revive), { lineWidth: -1 })) };
  }
  if (request.groups) return { text: groupedDump(JSON.parse(request.groups, revive)) };
  if (request.texts) {
    return {
      loaded: request.texts.map((text) => {
        try {
          // dsh reads preset.yml with js-yaml's default schema (metadata.ts), everything else with its own
          const options = request.schema === 'default' ? {} : { schema };
          return { ok: true, value: encode(yaml.load(text, options)) };
        } catch (error) {
          return { ok: false, error: String(error.message).split('\n')[0] };
        }
      }),
    };
  }
  throw new Error('unknown request');
}

await serve(answer);
