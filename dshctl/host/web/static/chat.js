// The chat box's extras, beside app.js: the commands of `agent chat` and the approval card. Both get
// the page's helpers passed in (state, add, h, openSession) rather than importing app.js back.

// The commands of `agent chat`, handled on the page; any other /word (the loop-agent's /forever, …)
// goes to the session as typed. /preset, /model and /permissions apply from the next message.
const HELP = [
  "/help — this list", "/session — the current session id", "/new — the next message starts a new session",
  "/preset NAME — use another agent preset from the next message",
  "/permissions P — switch the permission preset (workspace-write, danger-full-access) from the next message",
  "/model NAME — use another model from the next message (/model alone: which one)",
  "anything else starting with / (e.g. /forever) is sent to the session as typed"];

export function command(text, { state, add, h, openSession }) {
  const [name, ...rest] = text.trim().split(/\s+/);
  const arg = rest.join(" ");
  const note = (line) => add("note command", line);
  if (name === "/help") { add("note command", null, h("ul", {}, HELP.map((line) => h("li", { text: line })))); return true; }
  if (name === "/session") { note(state.session || "no session yet: the first message starts one"); return true; }
  if (name === "/new") {
    location.hash = "#/sessions"; openSession(null);
    note("the next message starts a new session"); return true;
  }
  if ((name === "/preset" || name === "/permissions") && arg) {
    state.next[name.slice(1)] = arg; note(`${name.slice(1)} ${arg} from the next message`); return true;
  }
  if (name === "/model") {
    if (arg) { state.next.model = arg; note(`model ${arg} from the next message`); }
    else note(state.next.model ? `model ${state.next.model} from the next message`
      : state.model ? `model ${state.model}` : "the llm row's own model");
    return true;
  }
  return false;
}

// `/preset NAME` checked as it is typed, as `agent chat` checks it: against the host's presets
// (GET /api/presets re-scans the preset roots), with the host's own texts. null when the line is fine
// or is not a /preset line.
export async function checkTyped(text, api) {
  const typed = text.match(/^\s*\/preset\s+(\S+)\s*$/);
  if (!typed) return null;
  const name = typed[1];
  const listed = await api.get("/api/presets");
  if (!listed.available) {
    return `preset "${name}" asked for, but no @dshctl/agent-presets row runs in this profile — ` +
      "list the presets with `dshctl preset list`";
  }
  const found = listed.presets.find((p) => p.id === name);
  if (!found) {
    const usable = listed.presets.filter((p) => !p.broken).map((p) => p.id).join(", ") || "none";
    return `agent-presets: preset "${name}" not found (available: ${usable}) — ` +
      "run `dshctl preset list` to see every root and preset";
  }
  if (found.broken) return `agent-presets: preset "${name}" failed to mount: ${found.broken}`;
  return null;
}

// An approval (ctx.approval through the ask_user channel): the tool call, why, and two buttons whose
// answers are the options the approval service reads ("allow once" / "deny").
export function showApproval(question, reply, { add, h }) {
  const { toolName, arguments: args, reason } = question.approval;
  const allow = h("button", { type: "button", text: "Allow once", onclick: () => reply({ option: "allow once" }) });
  const deny = h("button", { type: "button", text: "Deny", onclick: () => reply({ option: "deny" }) });
  const node = add("assistant question approval", null,
    h("p", {}, h("b", { text: `Approval needed: ${toolName}` })),
    h("pre", { class: "args", text: JSON.stringify(args ?? {}, null, 2) }),
    reason ? h("p", { text: `Reason: ${reason}` }) : null,
    h("div", { class: "inline", role: "group", "aria-label": `Approve ${toolName}` }, allow, deny));
  node.setAttribute("aria-label", `Approval needed: ${toolName}`);
  deny.focus();                       // the safe answer is the one Enter picks
  return node;
}

