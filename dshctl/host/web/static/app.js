// dshctl's browser app: Sessions (chat), Settings (bundle panels), Status. No build step, no CDN.
// Every state-changing request is a same-origin POST with a JSON body (the server refuses others).

// The host's token comes in the URL `dshctl host run` logs (#token=…) and is kept for this origin.
const TOKEN_KEY = "dshctl-token";
if (location.hash.startsWith("#token=")) {
  localStorage.setItem(TOKEN_KEY, decodeURIComponent(location.hash.slice("#token=".length)));
  history.replaceState(null, "", location.pathname + "#/sessions");
}

import { command, showApproval, checkTyped } from "/ui/chat.js";
import { Transcript, follow, h } from "/ui/transcript.js";

export const api = {
  async get(url) { return answer(await fetch(url, { headers: { Accept: "application/json" } })); },
  async post(url, body) {
    return answer(await fetch(url, { method: "POST", body: JSON.stringify(body ?? {}),
      headers: { "Content-Type": "application/json", "X-Dshctl-Token": localStorage.getItem(TOKEN_KEY) || "" } }));
  },
};

async function answer(response) {
  const body = await response.json().catch(() => ({}));
  if (!response.ok) {
    const error = new Error(body.error || `${response.status} ${response.statusText}`);
    error.hint = body.hint || (/X-Dshctl-Token/.test(body.error || "")
      ? "open the link `dshctl host run` logged (…/#token=…): it gives this page the host's token" : undefined);
    throw error;
  }
  return body;
}

const $ = (id) => document.getElementById(id);
const state = { app: null, session: null, chat: null, sessions: [], panelsKey: "", mounted: [],
                next: {}, model: null };   // next: /preset, /model, /permissions for the next message

// ---- router ----------------------------------------------------------------------------------
function route() {
  const [, view = "sessions", id] = location.hash.match(/^#\/([a-z]+)(?:\/(.+))?/) || [];
  const known = ["sessions", "settings", "status"].includes(view) ? view : "sessions";
  for (const name of ["sessions", "settings", "status"]) $(`view-${name}`).hidden = name !== known;
  for (const link of document.querySelectorAll("nav a")) {
    if (link.dataset.view === known) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  if (known === "sessions") openSession(id ? decodeURIComponent(id) : null);
  if (known === "settings") renderSettings(true);
  if (known === "status") renderStatus();
}

// ---- live status feed (Server-Sent Events) ---------------------------------------------------
function connect() {
  const feed = new EventSource("/api/status/events");
  feed.onopen = () => { $("live").textContent = "live"; };
  feed.onerror = () => { $("live").textContent = "reconnecting…"; };
  feed.onmessage = (message) => {
    const before = state.app;
    state.app = JSON.parse(message.data);
    if (!$("view-status").hidden) renderStatus();
    if (!$("view-settings").hidden) renderSettings(false);
    if (!before || JSON.stringify(before.agents) !== JSON.stringify(state.app.agents)) loadSessions();
  };
}

// ---- sessions --------------------------------------------------------------------------------
async function loadSessions() {
  try {
    const listed = await api.get("/api/sessions");
    state.sessions = listed.workspaces;
    renderSessions(listed);
  } catch (error) {
    $("groups").replaceChildren(h("p", { class: "error", text: error.message }));
  }
}

function renderSessions(listed) {
  const groups = listed.workspaces.map(({ cwd, sessions }) => h("section", {},
    h("h3", { text: cwd }),
    h("ul", { "aria-label": `Sessions in ${cwd}` }, sessions.map((s) => {
      const label = s.archived ? "Unarchive" : "Archive";
      return h("li", { class: [s.id === state.session ? "current" : "", s.archived ? "archived" : ""].join(" "),
                       "data-session": s.id },
        h("a", { href: `#/sessions/${encodeURIComponent(s.id)}`, title: s.id, text: s.id }),
        s.running ? h("span", { class: "badge running", text: "running" }) : null,
        s.archived ? h("span", { class: "badge", text: "archived" }) : null,
        listed.archiving ? h("button", { type: "button", "aria-label": label, text: label,
          onclick: () => archive(s.id, !s.archived) }) : null);
    }))));
  $("groups").replaceChildren(...(groups.length ? groups : [h("p", { class: "meta", text: "No sessions yet." })]));
}

async function archive(id, archived) {
  try { await api.post("/api/sessions/archive", { session: id, archived }); } catch (error) { showError(error); }
  loadSessions();
}

// ---- chat ------------------------------------------------------------------------------------
function openSession(id) {
  if (state.chat && state.session === id) return;
  if (state.chat) state.chat.close();
  state.transcript?.close();
  state.chat = null;
  state.session = id;
  state.running = false;
  $("log").replaceChildren();
  state.transcript = new Transcript($("log"), {
    agent: (item) => {
      state.model = item.model;
      $("chat-meta").textContent = [item.preset && `preset ${item.preset}`, item.model && `model ${item.model}`]
        .filter(Boolean).join(" · ");
    },
    running: setRunning, ask: showQuestion,
    asked: () => document.querySelectorAll("#log .question").forEach((q) => q.remove()),
  });
  $("chat-title").textContent = id || "New session";
  $("chat-meta").textContent = "";
  setRunning(false);
  for (const li of document.querySelectorAll("#groups li")) li.classList.toggle("current", li.dataset.session === id);
  if (!id) return;
  state.chat = follow(id, state.transcript);
}

const add = (...args) => state.transcript.add(...args);

function showQuestion(question) {
  const reply = (answer) => api.post("/api/chat/answer", { session: state.session, answer }).catch(showError);
  if (question.approval) return showApproval(question, reply, { add, h });
  const free = h("input", { type: "text", "aria-label": "Your answer" });
  const options = (question.options || []).map((o) => h("button", { type: "button", title: o.description || "",
    text: o.label + (o.recommended ? " (recommended)" : ""), onclick: () => reply({ option: o.label }) }));
  const form = question.allowFreeText === false ? null : h("form", { class: "inline",
    onsubmit: (e) => { e.preventDefault(); if (free.value.trim()) reply({ text: free.value }); } },
    free, h("button", { type: "submit", text: "Answer" }));
  const node = add("assistant question", null, h("p", {}, h("b", { text: question.question })),
                   h("div", { class: "inline" }, options), form);
  (options[0] || free).focus();
  return node;
}

function setRunning(running) {
  state.running = running;
  $("stop").disabled = !running || !state.session;
  $("chat-state").textContent = state.session ? (running ? "running" : "idle") : "";
  $("chat-state").className = `badge ${running ? "running" : ""}`;
}

async function send(mode) {
  const box = $("message");
  const text = box.value;
  if (!text.trim()) return;
  $("chat-error").hidden = true;
  const problem = await checkTyped(text, api).catch(() => null);
  if (problem) { showTyped(problem); return; }          // a /preset the host does not have: not taken
  // The line leaves the box as it is taken, not when the host answers: what is typed while the
  // message is on its way (the next line, a /model for the next message) is the user's, not ours.
  if (box.value === text) box.value = "";
  if (text.trim().startsWith("/") && command(text, { state, add, h, openSession })) return;
  const next = state.next;
  state.next = {};                                      // this message's; a refused /preset … is not kept
  try {
    const sent = await api.post("/api/chat/send", { session: state.session, text, mode, ...next });
    if (sent.session !== state.session) location.hash = `#/sessions/${encodeURIComponent(sent.session)}`;
    loadSessions();
  } catch (error) {
    if (!box.value) box.value = text;                  // not sent: the line comes back to be fixed
    showError(error);
  }
}

// The chat box is checked as it is typed (a /preset the host does not have shows its error at once).
let typing = { timer: 0, turn: 0, shown: false };
function checkBox() {
  clearTimeout(typing.timer);
  typing.timer = setTimeout(async () => {
    const turn = ++typing.turn;
    const problem = await checkTyped($("message").value, api).catch(() => null);
    if (turn !== typing.turn) return;                  // a later keystroke's answer decides
    if (problem) showTyped(problem);
    else if (typing.shown) { $("chat-error").hidden = true; typing.shown = false; $("message").removeAttribute("aria-invalid"); }
  }, 80);
}

function showTyped(problem) {
  $("chat-error").textContent = problem;
  $("chat-error").hidden = false;
  $("message").setAttribute("aria-invalid", "true");
  typing.shown = true;
}

function showError(error) {
  $("chat-error").textContent = error.message + (error.hint ? ` — ${error.hint}` : "");
  $("chat-error").hidden = false;
}

// ---- settings (bundle panels: ES modules exporting mount(element, api)) ------------------------
async function renderSettings(force) {
  if (!state.app) return;
  const panels = state.app.panels || [];
  const key = JSON.stringify(panels);
  if (!force && key === state.panelsKey) return;
  if (force && key === state.panelsKey && state.mounted.length) return;
  state.panelsKey = key;
  for (const unmount of state.mounted) { try { unmount?.(); } catch (e) { /* a panel's own bug */ } }
  state.mounted = [];
  $("no-panels").hidden = panels.length > 0;
  const host = $("panels");
  host.replaceChildren();
  for (const panel of panels) {
    const body = h("div");
    const section = h("section", { class: "panel", "aria-label": panel.title, "data-panel": panel.id },
                      h("h2", { text: panel.title }), body);
    host.append(section);
    try {
      const module = await import(panel.script);
      state.mounted.push(module.mount(body, api));
    } catch (error) {
      body.append(h("p", { class: "error", text: `this panel failed to load: ${error.message}` }));
    }
  }
}

// ---- status ----------------------------------------------------------------------------------
function rowTree(rows) {
  return h("ul", { class: "tree" }, rows.map((row) => {
    const failed = row.error != null || String(row.state).toLowerCase() === "failed";
    return h("li", { class: failed ? "failed-row" : "", "data-row": row.id },
      h("b", { text: row.id }), " ", h("code", { text: row.name || "" }), " ",
      h("span", { class: `badge state-${String(row.state).toLowerCase()}`, text: row.state }),
      row.error ? h("div", { class: "error" }, row.loc ? h("span", { class: "loc", text: row.loc + ": " }) : null,
                    row.error) : null,
      row.children && row.children.length ? rowTree(row.children) : null);
  }));
}

function errorsOf(outcome) {
  const failedRows = (outcome.rows || []).filter((r) => r.action === "failed").map((r) => h("div", { class: "error" },
    r.config_loc || r.loc ? h("span", { class: "loc", text: (r.config_loc || r.loc) + ": " }) : null,
    `row ${r.id} failed: ${r.reason || ""}`));
  return failedRows.concat((outcome.errors || []).map((e) => h("div", { class: "error" },
    e.loc ? h("span", { class: "loc", text: e.loc + ": " }) : null, e.message,
    e.hint ? h("div", { class: "meta", text: `hint: ${e.hint}` }) : null)));
}

function renderStatus() {
  const app = state.app;
  if (!app) return;
  const { status, history } = app;
  const info = status.host || {};
  const cards = [];
  cards.push(h("section", { class: "card", "aria-label": "Host" },
    h("h2", { text: "Host" }),
    h("p", { text: `profile ${info.profile ?? "?"} · pid ${info.pid ?? "?"} · source ${info.source ?? "?"}` }),
    info.last_good ? h("p", { class: "meta", text: `last good: ${info.last_good.saved_at || info.last_good.error || ""}` }) : null,
    (info.drift || []).length ? h("ul", {}, info.drift.map((line) => h("li", { text: line }))) : h("p", { text: "running tree = files on disk = last good" })));
  if (info.trial) {
    cards.push(h("section", { class: "card", "aria-label": "Trial" }, h("h2", { text: "Trial reload" }),
      h("p", { text: `the previous tree comes back at ${info.trial.deadline} unless you confirm this one` }),
      h("div", { class: "inline" },
        h("button", { type: "button", text: "Confirm", onclick: () => api.post("/api/reload/confirm", {})
          .catch((e) => alert(e.message)) }),
        h("button", { type: "button", text: "Revert", onclick: () => api.post("/api/reload/revert", {})
          .catch((e) => alert(e.message)) }))));
  }
  const last = status.last_reload;
  if (last) {
    cards.push(h("section", { class: "card", "aria-label": "Last reload" }, h("h2", { text: "Last reload" }),
      h("p", { class: `verdict-${last.verdict}`, text: last.summary }), errorsOf(last)));
  }
  cards.push(h("section", { class: "card", "aria-label": "Rows" }, h("h2", { text: "Rows" }), rowTree(status.rows || [])));
  cards.push(h("section", { class: "card", "aria-label": "Reload history" }, h("h2", { text: "Reload history" }),
    (history || []).length ? h("table", {},
      h("thead", {}, h("tr", {}, h("th", { text: "at" }), h("th", { text: "verdict" }), h("th", { text: "trigger" }), h("th", { text: "what" }))),
      h("tbody", {}, history.map((o) => h("tr", {},
        h("td", { text: o.at }), h("td", { class: `verdict-${o.verdict}`, text: o.verdict }), h("td", { text: o.trigger }),
        h("td", {}, o.summary, errorsOf(o))))))
      : h("p", { class: "meta", text: "no reload yet" })));
  $("status").replaceChildren(...cards);
}

// ---- wiring ----------------------------------------------------------------------------------
function start() {
  $("composer").addEventListener("submit", (e) => { e.preventDefault(); send("followup"); });
  $("message").addEventListener("input", checkBox);
  $("message").addEventListener("keydown", (e) => {
    if (e.key !== "Enter" || e.shiftKey || e.isComposing) return;
    e.preventDefault();
    send(e.ctrlKey || e.metaKey ? "steer" : "followup");
  });
  $("stop").addEventListener("click", async () => {
    try { await api.post("/api/chat/stop", { session: state.session }); } catch (error) { showError(error); }
  });
  $("new-session").addEventListener("click", () => { location.hash = "#/sessions"; openSession(null); $("message").focus(); });
  window.addEventListener("hashchange", route);
  connect();
  loadSessions();
  route();
  performance.mark("dshctl-first-render");   // ms since navigation start: docs/performance.md
}

start();
