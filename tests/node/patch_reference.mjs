// A reference model of dsh's applyEntryPatches (dsh-config.md §5), written for the differential
// test in tests/test_patching_node.py. It runs on the very objects js-yaml builds, so every
// JavaScript rule (truthiness, Map identity, `!==`, spreading, key order, TypeErrors) is the real one.

// `%C` in dsh's dump: the JSON text of the value, `undefined` for a missing one.
const quote = (value) => {
  const text = JSON.stringify(value);
  return text === undefined ? 'undefined' : text;
};

// Index every row with a truthy id, descending into groups whose config is a list.
function indexRows(index, rows) {
  for (const row of rows) {
    if (row.id) index.set(row.id, row);
    if (row.group && Array.isArray(row.config)) indexRows(index, row.config);
  }
}

function insertRows(state, patch, say) {
  const { id: groupId, insert: rows } = patch;
  if (!groupId) {
    state.rows.push(...rows);
  } else {
    const group = state.index.get(groupId);
    if (!group) return say(`patch insert: entry ${quote(groupId)} not found`);
    if (!group.group) return say(`patch insert: entry ${quote(groupId)} is not a group`);
    if (!Array.isArray(group.config)) group.config = [];
    group.config.push(...rows);
  }
  indexRows(state.index, rows); // inserted rows are targetable by every later patch
}

function overrideRow(state, patch, say) {
  const { id, insert, name, ...assigned } = patch;
  if (!id) return say('patch: id is required for non-insert patches');
  const row = state.index.get(id);
  if (!row) return say(`patch: entry ${quote(id)} not found`);
  if (name && name !== row.name) {
    const expected = quote(row.name);
    return say(`patch: name mismatch for ${quote(id)} (expected ${expected}, got ${quote(name)}), skipping`);
  }
  for (const [key, value] of Object.entries(assigned)) {
    if (key !== 'id') row[key] = value; // plain assignment, exactly as dsh does it
  }
}

// `layers` is a list of patch lists; returns the composed rows and [layerIndex, message] warnings.
export function applyLayers(base, layers) {
  const state = { rows: structuredClone(base), index: new Map() };
  indexRows(state.index, state.rows);
  const warnings = [];
  layers.forEach((patches, layer) => {
    const say = (message) => { warnings.push([layer, message]); };
    for (const patch of patches) {
      if (patch.insert) insertRows(state, patch, say);
      else overrideRow(state, patch, say);
    }
  });
  return { rows: state.rows, warnings };
}
