// A session's conversation as a list: text as it streams, reasoning collapsed, tool calls with their
// results, and each sub-agent at the tool call that started it (label, model, state, stop reason),
// expandable to the child's own transcript, streamed live. The chat uses one for the session; each
// expanded sub-agent gets its own, nested.

export function h(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (key === "text") node.textContent = value;
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child !== null && child !== undefined) node.append(child);
  }
  return node;
}

export function textOf(message) {
  return (message.content || []).filter((b) => b.type === "text").map((b) => b.text).join("");
}

// The session's feed: the events after the last seq this page has. The server never skips one; if a
// gap ever showed, the page asks again from its last seq (the browser's own reconnects send
// Last-Event-ID, which the server answers the same way).
export function follow(session, transcript) {
  let feed = null;
  const open = () => {
    feed = new EventSource(`/api/chat/events?session=${encodeURIComponent(session)}&after=${transcript.seq}`);
    feed.onmessage = (message) => {
      if (transcript.handle(JSON.parse(message.data)) === "gap") { feed.close(); open(); }
    };
  };
  open();
  return { close: () => feed.close() };
}

export class Transcript {
  constructor(list, hooks = {}) {
    this.list = list;
    this.hooks = hooks;          // agent(item), running(bool), ask(question), asked()
    this.seq = -1;
    this.streaming = null;
    this.tools = {};             // callId -> {result, node}
    this.children = {};          // sub-agent id -> its row (merged)
    this.childViews = {};        // sub-agent id -> {node, line, feed}
  }

  handle(item) {
    if (item.type === "agent") { this.hooks.agent?.(item); return; }
    if (item.type === "events") {      // one event's trouble must not drop the rest of its batch
      for (const event of item.events) {
        try { if (this.event(event) === "gap") return "gap"; } catch (error) { console.error("chat event", event.type, error); }
      }
      return;
    }
    if (item.type === "event") return this.event(item.event);
    if (item.type === "subagent") { this.child(item.child); return; }
    if (item.type === "ask") { this.hooks.ask?.(item.question); return; }
    if (item.type === "asked") this.hooks.asked?.();
  }

  event(event) {
    if (!event || event.seq <= this.seq) return;   // already shown
    if (event.seq > this.seq + 1) return "gap";
    this.seq = event.seq;
    const data = event.data || {};
    switch (event.type) {
      case "turn/start": this.hooks.running?.(true); break;
      case "turn/end": this.turnEnd(data); break;
      case "user/message": this.add("user", textOf(data)); break;
      case "assistant/chunk": this.chunk(data.chunk || {}); break;
      case "assistant/message": this.assistant(data.message || {}); break;
      case "tool/call": this.toolCall(data); break;
      case "tool/result": this.toolResult(data); break;
      default: break;
    }
  }

  add(kind, text, ...extra) {
    const item = h("li", { class: `msg ${kind}` }, text ?? "", ...extra);
    this.list.append(item);
    if (this.hooks.scroll !== false) item.scrollIntoView({ block: "end" });
    return item;
  }

  chunk(chunk) {
    if (chunk.type !== "text-delta" && chunk.type !== "reasoning-delta") return;
    if (!this.streaming) {
      this.streaming = { text: h("span"), reasoning: null, node: null };
      this.streaming.node = this.add("assistant", null, this.streaming.text);
      this.streaming.node.dataset.streaming = "true";
    }
    const s = this.streaming;
    if (chunk.type === "reasoning-delta") {
      if (!s.reasoning) {
        s.reasoning = h("pre");
        s.node.prepend(h("details", {}, h("summary", { text: "Reasoning" }), s.reasoning));
      }
      s.reasoning.append(chunk.text || "");
    } else {
      s.text.append(chunk.text || "");
    }
  }

  assistant(message) {
    const s = this.streaming;
    this.streaming = null;
    const reasoning = (message.content || []).filter((b) => b.type === "reasoning" || b.type === "thinking")
      .map((b) => b.text || b.thinking || "").join("");
    const node = s ? s.node : this.add("assistant", null);
    node.removeAttribute("data-streaming");
    node.replaceChildren(...(reasoning ? [h("details", {}, h("summary", { text: "Reasoning" }), h("pre", { text: reasoning }))] : []),
                         textOf(message));
    if (!node.textContent) node.remove();
  }

  toolCall(data) {
    const result = h("pre", { class: "result", text: "…" });
    const node = this.add("tool", null, h("details", {}, h("summary", { text: `tool ${data.name}` }),
                                            h("pre", { text: data.arguments || "" }), result));
    node.dataset.call = data.callId;
    this.tools[data.callId] = { result, node };
    for (const row of Object.values(this.children)) if (row.callId === data.callId) this.child(row);
  }

  toolResult(data) {
    const message = data.message || {};
    for (const block of message.content || []) {
      const text = block.type === "tool-result" ? textOf(block) : (block.text ?? JSON.stringify(block));
      const target = this.tools[block.toolCallId || message.toolCallId];
      if (target) target.result.textContent = text; else this.add("tool", text);
    }
  }

  turnEnd(data) {
    this.hooks.running?.(false);
    const reason = data.reason || {};
    if (reason.kind && reason.kind !== "completed" && reason.kind !== "stop") {
      const why = (reason.reason || reason.cause || {}).kind;   // {kind: "aborted", reason: {kind: "user"}}
      this.add("note", `turn ended: ${reason.kind}${why ? ` (${why})` : ""}`);
    }
    this.streaming = null;
  }

  // ---- sub-agents ------------------------------------------------------------------------------
  child(update) {
    const row = this.children[update.id] = { ...(this.children[update.id] || {}), ...update };
    const tool = row.callId ? this.tools[row.callId] : null;
    if (row.callId && !tool) return;              // shown when its tool call is
    let view = this.childViews[row.id];
    if (!view) view = this.childViews[row.id] = this.childView(row, tool);
    else if (tool && !tool.node.contains(view.node)) {   // its call became known: move it there
      view.node.closest("li")?.remove();
      tool.node.append(view.node);
    }
    const stop = row.stopReason ? ` · stop reason ${row.stopReason}` : "";
    view.line.textContent = `sub-agent ${row.label || row.id}${row.model ? ` · model ${row.model}` : ""} · ${row.state || "?"}${stop}`;
    view.node.dataset.state = row.state || "";
  }

  childView(row, tool) {
    const line = h("span", { class: "subagent-line" });
    const nested = h("ol", { class: "log nested", "aria-label": `Transcript of ${row.label || row.id}` });
    const details = h("details", {}, h("summary", { text: "Transcript" }), nested);
    const node = h("div", { class: "subagent", role: "group", "aria-label": `Sub-agent ${row.label || row.id}`,
                            "data-subagent": row.id }, line, details);
    const view = { node, line, feed: null };
    details.addEventListener("toggle", () => {
      if (details.open && !view.feed) {
        view.feed = follow(row.id, new Transcript(nested, { scroll: false }));
      } else if (!details.open && view.feed) {
        view.feed.close(); view.feed = null; nested.replaceChildren();
      }
    });
    if (tool) tool.node.append(node); else this.list.append(h("li", { class: "msg tool" }, node));
    return view;
  }

  close() {
    for (const view of Object.values(this.childViews)) view.feed?.close();
  }
}
