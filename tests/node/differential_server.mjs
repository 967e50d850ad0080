// JSON lines in, JSON lines out: one request per line ({"layers": [yamlText, ...]}), one answer per
// line: each layer parsed by js-yaml 4 (JSON_SCHEMA + !!js) and the layers composed by the reference.
// Usage: node differential_server.mjs <directory holding node_modules/js-yaml>
import { createRequire } from 'node:module';
import path from 'node:path';
import { serve } from './jsonlines.mjs';
import { applyLayers } from './patch_reference.mjs';

const require = createRequire(path.join(path.resolve(process.argv[2]), 'noop.js'));
const yaml = require('js-yaml');

const jsTag = new yaml.Type('tag:yaml.org,2002:js', {
  kind: 'scalar',
  resolve: (text) => text !== null && text !== '',
  construct: (text) => ({ __jsExpr: text }),
});
const schema = yaml.JSON_SCHEMA.extend([jsTag]);

// JSON cannot carry NaN/Infinity; tag them so the comparison can tell them from null.
const encode = (value) => JSON.stringify(value, (key, v) =>
  (typeof v === 'number' && !Number.isFinite(v) ? { $nonfinite: String(v) } : v));

function answer(request) {
  const parsed = [];
  const values = [];
  for (const text of request.layers) {
    try {
      const value = yaml.load(text, { schema });
      values.push(value);
      parsed.push({ ok: true, value: encode(value) });
    } catch (error) {
      parsed.push({ ok: false, error: String(error.message).split('\n')[0] });
    }
  }
  const out = { parsed };
  if (values.length === request.layers.length && values.every(Array.isArray)) {
    try {
      const { rows, warnings } = applyLayers([], values);
      out.composed = { ok: true, rows: encode(rows), warnings };
    } catch (error) {
      out.composed = { ok: false, error: `${error.name}: ${error.message}` };
    }
  }
  return out;
}

await serve(answer);
