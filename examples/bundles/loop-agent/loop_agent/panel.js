// Settings → Endless loop: the loop-agent bundle's browser half. The host's app imports this module and
// calls mount(element, api); it polls GET /api/loop-agent/state every 2 s, as dsh's panel does.
const POLL_MS = 2000;

export function mount(root, api) {
  const make = (tag, attrs = {}, text) => {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
    if (text !== undefined) node.textContent = text;
    return node;
  };
  const toggle = make("button", { type: "button", role: "switch", "aria-checked": "false", id: "loop-agent-switch",
                                  "aria-label": "Endless loop" });
  const label = make("label", { for: "loop-agent-switch" }, "Endless loop");
  const armed = make("span", { class: "meta", role: "status", "data-armed": "" }, "");
  const line = make("div", { class: "inline" });
  line.append(toggle, label, armed);
  const help = make("p", { class: "meta" },
    "Off stops every looping session at once. Type /forever in a session's chat to arm that session.");
  const field = make("div", { class: "field" });
  const editorLabel = make("label", { for: "loop-agent-continuation" }, "Continuation");
  const editor = make("textarea", { id: "loop-agent-continuation", rows: "3" });
  const hint = make("small", { class: "meta" }, "{{lastAnswer}}, {{round}} and {{task}} are filled in; empty restores the default.");
  field.append(editorLabel, editor, hint);
  const actions = make("div", { class: "inline" });
  const save = make("button", { type: "button" }, "Save continuation");
  const reset = make("button", { type: "button" }, "Restore default");
  const note = make("span", { class: "meta", role: "status" }, "");
  actions.append(save, reset, note);
  const error = make("p", { class: "error", role: "alert", hidden: "" });
  root.append(line, help, field, actions, error);

  let editing = false;
  editor.addEventListener("input", () => { editing = true; });
  const show = (s) => {
    toggle.setAttribute("aria-checked", String(s.enabled));
    armed.textContent = `${s.attachedAgents} session${s.attachedAgents === 1 ? "" : "s"} armed`;
    armed.dataset.armed = String(s.attachedAgents);
    if (!editing) editor.value = s.continuation;
    editor.placeholder = s.defaultContinuation;
    error.hidden = true;
  };
  const fail = (e) => { error.textContent = e.message; error.hidden = false; };
  const poll = () => api.get("/api/loop-agent/state").then(show, fail);
  toggle.addEventListener("click", () =>
    api.post("/api/loop-agent/enabled", { enabled: toggle.getAttribute("aria-checked") !== "true" }).then(show, fail));
  const store = (text) => api.post("/api/loop-agent/continuation", { continuation: text })
    .then((s) => { editing = false; show(s); note.textContent = s.changed ? "saved" : "unchanged"; }, fail);
  save.addEventListener("click", () => store(editor.value));
  reset.addEventListener("click", () => store(""));
  poll();
  const timer = setInterval(poll, POLL_MS);
  return () => clearInterval(timer);
}
