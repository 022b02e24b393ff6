// svc dev: the chat page. Plain JavaScript, no build step; every action is a POST the
// server turns into a signed delivery, and every record comes back on the event stream.
"use strict";

const $ = (id) => document.getElementById(id);
const USERS_KEY = "svc-dev-users";
const state = {
  users: [],
  current: null,
  chats: new Map(),      // user key -> element holding the chat's bubbles
  bubbles: new Map(),    // message id -> bubble element
  runs: new Map(),       // update key -> run element
  quote: null,           // message id quoted by the next message
  seen: new Set(),       // "boot:id" of records already drawn
  business: "",
};

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name === "class") node.className = value;
    else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

// WhatsApp's formatting: ```monospace```, *bold*, _italic_, ~strike~ (escaped first).
function formatted(text) {
  const span = el("span", { class: "formatted" });
  let html = String(text).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
  html = html.replace(/```([\s\S]+?)```/g, "<code>$1</code>");
  html = html.replace(/(^|[\s(])\*(?!\s)([^*\n]+?)\*(?=$|[\s).,!?:;])/g, "$1<b>$2</b>");
  html = html.replace(/(^|[\s(])_(?!\s)([^_\n]+?)_(?=$|[\s).,!?:;])/g, "$1<i>$2</i>");
  html = html.replace(/(^|[\s(])~(?!\s)([^~\n]+?)~(?=$|[\s).,!?:;])/g, "$1<s>$2</s>");
  span.innerHTML = html.replace(/\n/g, "<br>");
  return span;
}

async function api(path, body) {
  const options = body === undefined ? {} : {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
  };
  const response = await fetch(path, options);
  const data = await response.json().catch(() => ({}));
  if (!response.ok) {
    note(`${path}: ${data.error || response.status}`, "error");
  }
  return data;
}

function note(text, kind) {
  const item = el("li", { class: `entry ${kind || "note"}` }, el("span", { class: "what" }, text));
  $("log").prepend(item);
}

// --- users -----------------------------------------------------------------------------

function userKey(user) { return user.bsuid || user.phone; }

function saveUsers() { localStorage.setItem(USERS_KEY, JSON.stringify(state.users)); }

function addUser(user, select) {
  const key = userKey(user);
  if (!state.users.some((u) => userKey(u) === key)) {
    state.users.push(user);
    saveUsers();
  }
  drawUsers();
  if (select) selectUser(key);
}

function drawUsers() {
  const list = $("user-list");
  list.replaceChildren(...state.users.map((user) => {
    const key = userKey(user);
    const label = user.phone ? `+${user.phone}` : `${user.username || ""} ${user.bsuid}`;
    return el("li", {
      class: key === state.current ? "user on" : "user",
      "data-key": key,
      onclick: () => selectUser(key),
    }, el("b", {}, user.name), el("small", {}, label));
  }));
}

function chatOf(key) {
  if (!state.chats.has(key)) {
    const box = el("div", { class: "chat-log", "data-chat": key, hidden: key !== state.current });
    $("messages").append(box);
    state.chats.set(key, box);
    if (!state.users.some((u) => userKey(u) === key)) {
      const user = key.match(/^\d+$/) ? { name: key, phone: key } : { name: key, bsuid: key };
      addUser(user, false);
    }
  }
  return state.chats.get(key);
}

function selectUser(key) {
  state.current = key;
  const user = state.users.find((u) => userKey(u) === key);
  $("chat-title").textContent = user ? `${user.name} (${user.phone ? "+" + user.phone : user.bsuid})` : key;
  chatOf(key);
  for (const [chat, box] of state.chats) box.hidden = chat !== key;
  drawUsers();
  setQuote(null);
  api("/dev/api/open", { chat: document.hidden ? null : key });
  scrollDown();
}

function currentUser() { return state.users.find((u) => userKey(u) === state.current); }

async function act(action) {
  const user = currentUser();
  if (!user) { note("add a user first", "error"); return; }
  if (state.quote && !action.context && action.kind !== "reaction") action.context = state.quote;
  setQuote(null);
  await api("/dev/api/act", { user, action });
}

function setQuote(messageId) {
  state.quote = messageId;
  $("quote-bar").hidden = !messageId;
  if (messageId) {
    const bubble = state.bubbles.get(messageId);
    $("quote-text").textContent = "Replying to: " + (bubble ? bubble.dataset.summary : messageId);
  }
}

// --- bubbles ---------------------------------------------------------------------------

function scrollDown() { const box = $("messages"); box.scrollTop = box.scrollHeight; }

function bubble(chat, direction, id, kind, summary, ...content) {
  const node = el("div", {
    class: `bubble ${direction}`, "data-id": id, "data-kind": kind, "data-summary": summary,
  }, ...content);
  const tools = el("div", { class: "tools" },
    el("button", { type: "button", class: "quote", title: "Quote", onclick: () => setQuote(id) }, "↩"),
    direction === "out"
      ? el("button", { type: "button", class: "react", title: "React", onclick: () => reactTo(id) }, "☺")
      : null);
  node.append(tools, el("span", { class: "ticks", "data-status": "" }));
  if (id) state.bubbles.set(id, node);
  chatOf(chat).append(node);
  scrollDown();
  return node;
}

function quoted(message) {
  const id = message && message.context && message.context.id;
  if (!id) return null;
  const target = state.bubbles.get(id);
  return el("div", { class: "quoted" }, target ? target.dataset.summary : id);
}

function reactTo(messageId) {
  const box = $("panel");
  box.hidden = false;
  box.replaceChildren(el("span", {}, "React: "),
    ...["👍", "❤️", "😂", "😮", "🙏", ""].map((emoji) => el("button", {
      type: "button", class: "emoji",
      onclick: () => { box.hidden = true; act({ kind: "reaction", message_id: messageId, emoji }); },
    }, emoji || "remove")));
}

function setReaction(messageId, emoji, from) {
  const target = state.bubbles.get(messageId);
  if (!target) return;
  let badge = target.querySelector(`.reaction[data-from="${from}"]`);
  if (!badge) {
    badge = el("span", { class: "reaction", "data-from": from });
    target.append(badge);
  }
  badge.textContent = emoji;
  badge.hidden = !emoji;
}

function setTicks(messageId, status) {
  const target = state.bubbles.get(messageId);
  if (!target) return;
  const ticks = target.querySelector(".ticks");
  const rank = { "": 0, sent: 1, delivered: 2, read: 3, failed: 4 };
  if ((rank[status] || 0) <= (rank[ticks.dataset.status] || 0)) return;
  ticks.dataset.status = status;
  ticks.textContent = { sent: "✓", delivered: "✓✓", read: "✓✓", failed: "!" }[status] || "";
  ticks.title = status;
}

function userMessage(chat, message) {
  const type = message.type;
  const body = message[type] || {};
  let content;
  let summary;
  if (type === "text") { content = formatted(body.body); summary = body.body; }
  else if (type === "location") {
    summary = `📍 ${body.name || ""} ${body.latitude}, ${body.longitude}`;
    content = el("div", { class: "location" }, summary, body.address ? el("div", {}, body.address) : null);
  } else if (type === "contacts") {
    summary = "👤 " + body.map((c) => c.name.formatted_name).join(", ");
    content = el("div", { class: "contact" }, summary);
  } else if (type === "interactive") {
    const reply = body[body.type] || {};
    summary = body.type === "nfm_reply" ? `Flow answer: ${reply.response_json}` : reply.title;
    content = el("div", { class: "tapped" }, summary);
  } else if (type === "button") {
    summary = body.text; content = el("div", { class: "tapped" }, body.text);
  } else if (type === "image" || type === "document") {
    summary = `${type === "image" ? "🖼" : "📄"} ${body.caption || body.filename || type}`;
    content = el("div", { class: "media" },
      type === "image" ? el("img", {
        class: "thumbnail", alt: body.caption || "image", src: `/dev/media/${encodeURIComponent(body.id)}`,
        onerror: (event) => event.target.remove(),
      }) : el("div", { class: "filename" }, `📄 ${body.filename || "file"}`),
      body.caption ? el("div", { class: "caption" }, body.caption) : null);
  } else { summary = type; content = el("pre", {}, JSON.stringify(message, null, 1)); }
  bubble(chat, "in", message.id, type, summary, quoted(message), content);
}

function interactiveContent(id, chat, interactive, definition) {
  const parts = [];
  const header = interactive.header;
  if (header && header.type === "text") parts.push(el("div", { class: "header" }, header.text));
  else if (header) parts.push(el("div", { class: "header media" }, `[${header.type} header]`));
  if (interactive.body) parts.push(el("div", { class: "body" }, formatted(interactive.body.text)));
  if (interactive.footer) parts.push(el("div", { class: "footer" }, interactive.footer.text));
  const action = interactive.action || {};
  if (interactive.type === "button") {
    parts.push(el("div", { class: "buttons" }, (action.buttons || []).map((b) => el("button", {
      type: "button", class: "reply-button", "data-reply-id": b.reply.id,
      onclick: () => act({ kind: "button_reply", id: b.reply.id, title: b.reply.title, context: id }),
    }, b.reply.title))));
  } else if (interactive.type === "list") {
    const rows = el("div", { class: "list-rows", hidden: true }, (action.sections || []).map((section) => [
      section.title ? el("div", { class: "section" }, section.title) : null,
      section.rows.map((row) => el("button", {
        type: "button", class: "list-row", "data-row-id": row.id,
        onclick: () => act({
          kind: "list_reply", id: row.id, title: row.title, description: row.description, context: id,
        }),
      }, el("b", {}, row.title), row.description ? el("small", {}, row.description) : null)),
    ]));
    parts.push(el("button", {
      type: "button", class: "list-open", onclick: () => { rows.hidden = !rows.hidden; },
    }, "☰ " + (action.button || "Choose")), rows);
  } else if (interactive.type === "cta_url") {
    const p = action.parameters || {};
    parts.push(el("a", { class: "cta", href: p.url, target: "_blank", rel: "noopener noreferrer" },
      "↗ " + p.display_text));
  } else if (interactive.type === "flow") {
    const p = action.parameters || {};
    parts.push(el("button", {
      type: "button", class: "flow-open",
      onclick: () => (definition ? flowForm(id, p, definition) : flowPanel(id, p)),
    }, p.flow_cta || "Open flow"));
  } else {
    parts.push(el("pre", {}, JSON.stringify(action, null, 1)));
  }
  return parts;
}

function paramText(p) {
  const value = p[p.type];
  return p.text || p.payload || (value && (value.fallback_value || value.link || value.id)) || p.type;
}

// {{1}}, {{2}}... (or {{name}} for named parameters) filled from the send's parameters.
function filled(text, parameters) {
  return String(text || "").replace(/\{\{\s*(\w+)\s*\}\}/g, (whole, key) => {
    const found = /^\d+$/.test(key) ? parameters[Number(key) - 1] : parameters.find((p) => p.parameter_name === key);
    return found ? paramText(found) : whole;
  });
}

// A template the dev folder's templates/ defines, drawn as the user sees it: header, body and
// footer with the send's parameters in place, then its buttons (quick replies tap).
function definedTemplateContent(id, template, definition) {
  const sent = template.components || [];
  const paramsOf = (type) => ((sent.find((c) => c.type === type) || {}).parameters || []);
  const parts = [el("div", { class: "template-name" }, `Template ${template.name} (${(template.language || {}).code || ""})`)];
  for (const component of definition.components || []) {
    const kind = String(component.type || "").toUpperCase();
    if (kind === "HEADER") {
      const format = String(component.format || "TEXT").toUpperCase();
      parts.push(format === "TEXT"
        ? el("div", { class: "header" }, filled(component.text, paramsOf("header")))
        : el("div", { class: "header media" }, `[${format.toLowerCase()} header] ${paramsOf("header").map(paramText).join(" ")}`));
    } else if (kind === "BODY") {
      parts.push(el("div", { class: "body" }, formatted(filled(component.text, paramsOf("body")))));
    } else if (kind === "FOOTER") {
      parts.push(el("div", { class: "footer" }, component.text));
    } else if (kind === "BUTTONS") {
      parts.push(el("div", { class: "buttons" }, (component.buttons || []).map((button, index) => {
        const mine = sent.find((c) => c.type === "button" && String(c.index) === String(index));
        const params = (mine && mine.parameters) || [];
        const type = String(button.type || "").toUpperCase();
        if (type === "QUICK_REPLY") {
          const payload = params.length ? paramText(params[0]) : button.text;
          return el("button", {
            type: "button", class: "reply-button quick-reply", "data-reply-id": payload,
            onclick: () => act({ kind: "quick_reply", payload, text: button.text, context: id }),
          }, button.text);
        }
        if (type === "URL") {
          return el("a", { class: "cta", href: filled(button.url, params), target: "_blank", rel: "noopener noreferrer" },
            "↗ " + button.text);
        }
        if (type === "PHONE_NUMBER") return el("span", { class: "cta" }, `📞 ${button.text} ${button.phone_number || ""}`);
        return el("span", { class: "cta" }, button.text || type.toLowerCase());
      })));
    }
  }
  return parts;
}

function templateContent(id, template, definition) {
  if (definition) return definedTemplateContent(id, template, definition);
  const parts = [el("div", { class: "template-name" }, `Template ${template.name} (${(template.language || {}).code || ""})`)];
  for (const component of template.components || []) {
    const values = (component.parameters || []).map(paramText);
    if (component.type === "button" && component.sub_type === "quick_reply") {
      const payload = (component.parameters || [])[0] || {};
      parts.push(el("button", {
        type: "button", class: "reply-button quick-reply", "data-reply-id": payload.payload,
        onclick: () => act({ kind: "quick_reply", payload: payload.payload, text: payload.payload, context: id }),
      }, payload.payload));
    } else if (values.length) {
      parts.push(el("div", { class: "params" }, `${component.type}: ${values.join(" · ")}`));
    }
  }
  return parts;
}

function flowPanel(id, parameters) {
  const box = $("panel");
  box.hidden = false;
  const area = el("textarea", { id: "flow-json", rows: 4, "aria-label": "Flow response JSON" });
  area.value = JSON.stringify({ flow_token: parameters.flow_token || "unused" });
  box.replaceChildren(el("div", {}, "Flow response JSON:"), area,
    el("button", {
      type: "button", id: "flow-send",
      onclick: () => { box.hidden = true; act({ kind: "flow", response_json: area.value, context: id }); },
    }, "Send flow answer"));
}

// A Flow drawn from its Flow JSON (the dev folder's flows/): the screen the message opens
// (else the first), its inputs, and its Footer as the submit button. The answer is an
// nfm_reply whose response_json holds each input's value by its name, and the flow_token.
function flowComponents(children) {
  return (children || []).flatMap((c) => (c && c.type === "Form" ? flowComponents(c.children) : [c]));
}

function flowOptions(source, screen) {
  if (Array.isArray(source)) return source;
  const name = typeof source === "string" && source.match(/^\$\{data\.(\w+)\}$/);
  const declared = name && screen.data && screen.data[name[1]];
  return (declared && Array.isArray(declared.__example__)) ? declared.__example__ : [];
}

function flowField(c, screen) {
  const label = (text) => el("span", { class: "flow-label" }, text || c.name);
  const options = () => flowOptions(c["data-source"], screen);
  switch (c.type) {
    case "TextHeading": case "TextSubheading": case "TextBody": case "TextCaption":
      return el("div", { class: `flow-text ${c.type}` }, String(c.text || ""));
    case "TextInput": {
      const kind = { number: "number", email: "email", password: "password", phone: "tel" }[c["input-type"]] || "text";
      return el("label", {}, label(c.label), el("input", {
        type: kind, name: c.name, "data-type": c["input-type"] || "text", required: c.required === true,
      }));
    }
    case "TextArea":
      return el("label", {}, label(c.label), el("textarea", { name: c.name, required: c.required === true }));
    case "DatePicker":
      return el("label", {}, label(c.label), el("input", { type: "date", name: c.name, required: c.required === true }));
    case "Dropdown":
      return el("label", {}, label(c.label), el("select", { name: c.name, required: c.required === true },
        el("option", { value: "" }, "Choose"),
        options().map((o) => el("option", { value: o.id }, o.title))));
    case "RadioButtonsGroup": case "CheckboxGroup": {
      const type = c.type === "CheckboxGroup" ? "checkbox" : "radio";
      return el("fieldset", { "data-group": c.name }, el("legend", {}, c.label || c.name),
        options().map((o) => el("label", {}, el("input", { type, name: c.name, value: o.id }), o.title)));
    }
    case "OptIn":
      return el("label", {}, el("input", { type: "checkbox", name: c.name, "data-optin": true, required: c.required === true }), c.label);
    case "Footer":
      return el("button", { type: "submit", id: "flow-submit" }, c.label || "Submit");
    default:
      return el("div", { class: "flow-text muted" }, `[${c.type}]`);
  }
}

function flowValues(form, components) {
  const values = {};
  for (const c of components) {
    if (!c.name || c.type === "Footer") continue;
    if (c.type === "CheckboxGroup") {
      values[c.name] = [...form.querySelectorAll(`input[name="${CSS.escape(c.name)}"]:checked`)].map((i) => i.value);
      continue;
    }
    const input = form.querySelector(`[name="${CSS.escape(c.name)}"]${c.type === "RadioButtonsGroup" ? ":checked" : ""}`);
    if (c.type === "OptIn") { values[c.name] = Boolean(input && input.checked); continue; }
    if (!input || input.value === "") continue;
    values[c.name] = input.dataset.type === "number" ? Number(input.value) : input.value;
  }
  return values;
}

function flowForm(id, parameters, flowJson) {
  const wanted = (parameters.flow_action_payload || {}).screen;
  const screen = flowJson.screens.find((s) => s.id === wanted) || flowJson.screens[0];
  const components = flowComponents((screen.layout || {}).children);
  const box = $("panel");
  box.hidden = false;
  const form = el("form", { id: "flow-form", class: "flow-form", "data-screen": screen.id },
    el("div", { class: "flow-title" }, screen.title || screen.id),
    components.map((c) => flowField(c, screen)));
  if (!components.some((c) => c.type === "Footer")) form.append(el("button", { type: "submit", id: "flow-submit" }, "Submit"));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const values = { ...flowValues(form, components), flow_token: parameters.flow_token || "unused" };
    box.hidden = true;
    act({ kind: "flow", response_json: JSON.stringify(values), context: id });
  });
  box.replaceChildren(form);
}

function sendContent(id, chat, payload, definition) {
  const type = payload.type;
  const body = payload[type] || {};
  if (type === "text") return [body.body, [formatted(body.body)]];
  if (type === "interactive") {
    const text = (body.body && body.body.text) || body.type;
    return [text, interactiveContent(id, chat, body, definition)];
  }
  if (type === "template") return [`Template ${body.name}`, templateContent(id, body, definition)];
  if (type === "location") {
    const text = `📍 ${body.name || ""} ${body.latitude}, ${body.longitude}`;
    return [text, [el("div", { class: "location" }, text, body.address ? el("div", {}, body.address) : null)]];
  }
  if (type === "contacts") {
    const text = "👤 " + body.map((c) => c.name.formatted_name).join(", ");
    return [text, body.map((c) => el("div", { class: "contact" }, "👤 " + c.name.formatted_name,
      ...(c.phones || []).map((p) => el("div", {}, p.phone))))];
  }
  if (["image", "video", "audio", "document", "sticker"].includes(type)) {
    const icon = { image: "🖼", video: "🎬", audio: "🎵", document: "📄", sticker: "🏷" }[type];
    const source = body.link ? `link ${body.link}` : `media id ${body.id}`;
    return [`${icon} ${body.caption || type}`, [el("div", { class: "media" }, `${icon} ${type}`,
      el("small", {}, source)), body.caption ? formatted(body.caption) : null,
      body.filename ? el("small", {}, body.filename) : null]];
  }
  return [type, [el("pre", {}, JSON.stringify(payload, null, 1))]];
}

// --- records ---------------------------------------------------------------------------

function logEntry(record, title, kind) {
  const details = el("details", { class: `entry ${kind}` },
    el("summary", {}, el("span", { class: "what" }, title)),
    el("pre", {}, JSON.stringify(record.raw || record.payload || record, null, 2)),
    record.answer ? el("pre", { class: "answer" }, "answer: " + JSON.stringify(record.answer, null, 2)) : null);
  $("log").prepend(el("li", { "data-type": record.type }, details));
}

function onDelivery(record) {
  const value = record.raw.entry[0].changes[0].value;
  const answer = record.answer || {};
  const answered = `${answer.status} ${JSON.stringify(answer.body)}`;
  if (record.origin === "status") {
    const status = value.statuses[0];
    setTicks(status.id, status.status);
    logEntry(record, `status ${status.status} → ${answered}`, "delivery status");
    return;
  }
  const message = value.messages[0];
  chatOf(record.chat);
  if (message.type === "reaction") setReaction(message.reaction.message_id, message.reaction.emoji, "user");
  else userMessage(record.chat, message);
  logEntry(record, `delivery ${message.type} → ${answered}`, "delivery");
}

function onSend(record) {
  if (record.outcome === "replayed") {
    logEntry(record, "send replayed (an earlier run's answer; nothing went out)", "send replayed");
    return;
  }
  const payload = record.payload || {};
  const chat = record.chat;
  if (payload.status === "read") {
    setTicks(payload.message_id, "read");
    if (payload.typing_indicator && chat === state.current) {
      $("typing").hidden = false;
      setTimeout(() => { $("typing").hidden = true; }, 5000);
    }
    logEntry(record, `read mark${payload.typing_indicator ? " + typing" : ""} → ${record.status}`, "send");
    return;
  }
  if (!chat) { logEntry(record, `${record.method} ${record.path} → ${record.status}`, "send"); return; }
  $("typing").hidden = true;
  if (record.outcome === "failed") {
    const error = (record.answer && record.answer.error) || {};
    bubble(chat, "out failed", null, "error", "failed",
      el("div", { class: "error" }, `Not sent: ${error.code} ${error.message || ""}`));
    logEntry(record, `send ${payload.type} FAILED ${record.status} (${error.code})`, "send failed");
    return;
  }
  if (payload.type === "reaction") {
    setReaction(payload.reaction.message_id, payload.reaction.emoji, "bot");
  } else {
    const [summary, content] = sendContent(record.message_id, chat, payload, record.definition);
    bubble(chat, "out", record.message_id, payload.type, String(summary).slice(0, 80),
      payload.context ? quoted({ context: { id: payload.context.message_id } }) : null, ...content);
  }
  logEntry(record, `send ${payload.type} → ${record.status} ${record.message_id || ""}`, "send");
}

function onRuntime(record) {
  const key = record.update || `state:${record.queue}`;
  let run = state.runs.get(key);
  if (!run) {
    run = el("details", { class: "run", "data-update": key },
      el("summary", {}, el("span", { class: "step" }), " ", el("span", { class: "label" })),
      el("ol", { class: "history" }));
    state.runs.set(key, run);
    $("runs").prepend(run);
  }
  run.dataset.step = record.step;
  run.querySelector(".step").textContent = record.step;
  const label = record.update
    ? `${record.kind || ""} ${record.update.slice(0, 12)}${record.attempt ? ` attempt ${record.attempt}` : ""}`
    : `state of ${record.queue.slice(0, 12)}`;
  run.querySelector(".label").textContent = label;
  const parts = [record.step];
  if (record.seconds !== undefined) parts.push(`${(record.seconds * 1000).toFixed(1)} ms`);
  if (record.listener) parts.push(`waits for ${record.listener}`);
  if (record.timeout !== undefined) parts.push(`timeout ${record.timeout} s`);
  if (record.retry_in !== undefined) parts.push(`retry in ${record.retry_in} s`);
  if (record.reason) parts.push(`reason ${record.reason}`);
  if (record.by) parts.push(`by ${record.by.slice(0, 12)} (${record.how})`);
  if (record.error) parts.push(record.error);
  const line = el("li", {}, parts.join(" · "));
  if (record.traceback) line.append(el("pre", { class: "traceback" }, record.traceback));
  if (record.step === "state") line.append(el("pre", { class: "state" }, record.deleted ? "deleted" : JSON.stringify(record.state, null, 2)));
  run.querySelector(".history").append(line);
  note(`runtime: ${parts.join(" · ")} ${record.update ? record.update.slice(0, 12) : ""}`, "runtime");
  if (record.step === "dead") refreshDead();
}

function handle(record) {
  if (record.type === "hello") {
    $("link").textContent = "live"; $("link").dataset.state = "live";
    return;
  }
  const id = `${record.boot}:${record.id}`;
  if (state.seen.has(id)) return;
  state.seen.add(id);
  if (record.type === "delivery") onDelivery(record);
  else if (record.type === "send") onSend(record);
  else if (record.type === "runtime") onRuntime(record);
  else if (record.type === "failure") $("failure").value = record.armed || "";
  else if (record.type === "dead") refreshDead();
}

function connect() {
  const source = new EventSource("/dev/events");
  source.onmessage = (event) => handle(JSON.parse(event.data));
  source.onerror = () => {
    $("link").textContent = "reconnecting"; $("link").dataset.state = "reconnecting";
    if (source.readyState === EventSource.CLOSED) setTimeout(connect, 1000);
  };
}

async function refreshDead() {
  const data = await api("/dev/api/dead");
  $("dead-list").replaceChildren(...(data.items || []).map((item) => el("li", { class: "dead-item" },
    `${item.kind} ${item.update.slice(0, 12)} · ${item.attempts} attempts · ${item.reason || ""} `,
    el("button", { type: "button", class: "retry", onclick: async () => { await api("/dev/api/dead/retry", { id: item.id }); refreshDead(); } }, "Retry"),
    el("button", { type: "button", class: "drop", onclick: async () => { await api("/dev/api/dead/drop", { id: item.id }); refreshDead(); } }, "Drop"))));
}

// --- controls --------------------------------------------------------------------------

function attachPanel() {
  const box = $("panel");
  box.hidden = !box.hidden;
  const field = (id, label, value) => el("input", { id, placeholder: label, "aria-label": label, value });
  box.replaceChildren(
    el("fieldset", {}, el("legend", {}, "Location"),
      field("loc-lat", "Latitude", "37.4833"), field("loc-long", "Longitude", "-122.1489"),
      field("loc-name", "Place name", "Main office"), field("loc-address", "Address", "1 Hacker Way"),
      el("button", { type: "button", id: "send-location", onclick: () => { box.hidden = true; act({
        kind: "location", latitude: Number($("loc-lat").value), longitude: Number($("loc-long").value),
        name: $("loc-name").value, address: $("loc-address").value }); } }, "Send location")),
    el("fieldset", {}, el("legend", {}, "Contact"),
      field("contact-name", "Contact name", "Barbara Johnson"), field("contact-phone", "Contact phone", "+1 940 555 1234"),
      el("button", { type: "button", id: "send-contact", onclick: () => { box.hidden = true; act({
        kind: "contact", name: $("contact-name").value, phone: $("contact-phone").value }); } }, "Send contact")),
    el("fieldset", {}, el("legend", {}, "Image or document"),
      el("input", { type: "file", id: "upload-file", "aria-label": "File" }),
      field("upload-caption", "Caption", ""),
      el("button", { type: "button", id: "send-file", onclick: () => { box.hidden = true; sendFile(); } },
        "Send file")));
}

// The file's bytes go to the dev server (kept under a media id the bot can download), then
// the image or document delivery names that id.
async function sendFile() {
  const file = $("upload-file").files[0];
  if (!file) { note("choose a file first", "error"); return; }
  const query = new URLSearchParams({ filename: file.name, type: file.type || "application/octet-stream" });
  const response = await fetch(`/dev/api/upload?${query}`, {
    method: "POST", headers: { "Content-Type": "application/octet-stream" }, body: file,
  });
  const upload = await response.json().catch(() => ({}));
  if (!response.ok) { note(`upload: ${upload.error || response.status}`, "error"); return; }
  const kind = /^image\/(png|jpeg|webp)$/.test(upload.mime_type) ? "image" : "document";
  const caption = $("upload-caption").value || undefined;
  await act({ kind, media_id: upload.media_id, caption, filename: kind === "document" ? upload.filename : undefined });
}

async function start() {
  try { state.users = JSON.parse(localStorage.getItem(USERS_KEY) || "[]"); } catch { state.users = []; }
  const info = await api("/dev/api/state");
  state.business = (info.business || {}).display_phone_number || "";
  $("business").textContent = `business +${state.business}`;
  for (const [name, label] of Object.entries(info.failures || {})) {
    $("failure").append(el("option", { value: name }, `fails: ${label}`));
  }
  $("failure").value = info.armed || "";
  $("failure").addEventListener("change", () => api("/dev/api/fail", { failure: $("failure").value || null }));
  $("user-by").addEventListener("change", () => {
    const byPhone = $("user-by").value === "phone";
    $("user-phone").hidden = !byPhone; $("user-bsuid").hidden = byPhone; $("user-username").hidden = byPhone;
  });
  $("add-user").addEventListener("submit", (event) => {
    event.preventDefault();
    const name = $("user-name").value.trim() || "User";
    const user = $("user-by").value === "phone"
      ? { name, phone: $("user-phone").value.replace(/\D/g, "") }
      : { name, bsuid: $("user-bsuid").value.trim(), username: $("user-username").value.trim() || undefined };
    if (!userKey(user)) { note("a user needs a phone or a BSUID", "error"); return; }
    addUser(user, true);
  });
  $("composer").addEventListener("submit", (event) => {
    event.preventDefault();
    const text = $("text").value;
    if (!text.trim()) return;
    $("text").value = "";
    act({ kind: "text", text });
  });
  $("attach").addEventListener("click", attachPanel);
  $("quote-cancel").addEventListener("click", () => setQuote(null));
  $("dead-refresh").addEventListener("click", refreshDead);
  for (const tab of document.querySelectorAll(".tabs button")) {
    tab.addEventListener("click", () => {
      for (const other of document.querySelectorAll(".tabs button")) other.classList.toggle("on", other === tab);
      for (const name of ["log", "runs", "dead"]) $(name).hidden = name !== tab.dataset.tab;
      if (tab.dataset.tab === "dead") refreshDead();
    });
  }
  document.addEventListener("visibilitychange", () => {
    if (state.current) api("/dev/api/open", { chat: document.hidden ? null : state.current });
  });
  drawUsers();
  if (state.users.length) selectUser(userKey(state.users[0]));
  connect();
}

document.addEventListener("DOMContentLoaded", start);
