// evidex web page. Every string from the store, the model or a user goes into the page as text (textContent, or
// text nodes in elements made with createElement), never as markup; the server's Content-Security-Policy allows
// only this file as script.
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);
  const state = {
    papers: [], selected: new Set(), configs: [], run: null, source: null,
    maxQuestion: 4000, maxUploadMb: 200,
    answer: null,        // the answer shown: {question, answer, citations, ...}
    passages: new Map(), // citation index -> Promise of its passage (fetched as soon as the answer is in)
    viewToken: 0,        // the latest view asked for; an older one that finishes late is dropped
    viewed: null,        // {pdfId, page, pageCount, passage|null}
    zoom: 1,             // the page's width in widths of its box
    timings: {},  // read by the browser tests and benchmarks/web_page.py: ask -> first step / answer, click -> page shown (ms)
  };
  window.evidexTimings = state.timings;
  window.evidexView = {seq: 0};  // the last view shown: {seq, index, pdfId, page, ms, auto}

  // -- small helpers ---------------------------------------------------------------------------------------
  function el(tag, props, ...children) {
    const node = document.createElement(tag);
    const p = props || {};
    if (p.cls) node.className = p.cls;
    if (p.text !== undefined && p.text !== null) node.textContent = String(p.text);
    if (p.title) node.title = String(p.title);
    for (const child of children) if (child !== null && child !== undefined && child !== false) node.append(child);
    return node;
  }

  function message(text, kind) {
    const box = el("div", {cls: "message" + (kind === "info" ? " info" : ""), text});
    const close = el("button", {text: "×", title: "dismiss"});
    close.type = "button";
    close.addEventListener("click", () => box.remove());
    box.append(close);
    $("messages").append(box);
    if (kind === "info") setTimeout(() => box.remove(), 6000);
    while ($("messages").children.length > 5) $("messages").firstChild.remove();
  }

  function setStatus(text) { $("status").textContent = text || ""; }

  async function api(path, options) {
    const opts = options || {};
    const headers = {"X-Evidex-Request": "1"};
    let body;
    if (opts.json !== undefined) { headers["Content-Type"] = "application/json"; body = JSON.stringify(opts.json); }
    let response;
    try {
      response = await fetch(path, {method: opts.method || "GET", headers, body, credentials: "same-origin"});
    } catch (err) {
      throw new Error("The server cannot be reached (is evidex web still running?).");
    }
    let data = null;
    try { data = await response.json(); } catch (err) { data = null; }
    if (!response.ok) {
      const text = data && data.error ? data.error : `The server answered ${response.status}.`;
      const error = new Error(text);
      error.status = response.status;
      throw error;
    }
    return data;
  }

  const show = (node, visible) => { node.hidden = !visible; };
  const plural = (n, word, words) => `${n} ${n === 1 ? word : (words || word + "s")}`;
  const number = (n) => Number(n).toLocaleString("en-US");

  // Bidirectional, zero-width and control characters in what the user typed or named (the server marks the rest
  // the same way, tools/safe_text.py): shown as visible marks, so U+202E cannot draw a name reversed.
  const HIDDEN = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u00ad\u034f\u115f\u1160\u17b4\u17b5\u180e\u200b-\u200d\u2060-\u2064\ufeff]/g;
  const visible = (text) => String(text).replace(HIDDEN,
    (ch) => `\u27e8U+${ch.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")}\u27e9`);

  // Text with its paragraphs and lists kept: blank lines part paragraphs, "- x" / "* x" / "1. x" lines become
  // list items, other line breaks stay. Built from text nodes only.
  const BULLET = /^\s*[-*\u2022]\s+(.*)$/;
  const NUMBERED = /^\s*\d{1,3}[.)]\s+(.*)$/;
  function textBlocks(container, text) {
    container.replaceChildren();
    for (const block of String(text).split(/\n\s*\n/)) {
      let paragraph = null;
      let list = null;
      for (const line of block.split("\n")) {
        const bullet = BULLET.exec(line);
        const numbered = bullet ? null : NUMBERED.exec(line);
        if (bullet || numbered) {
          const tag = bullet ? "ul" : "ol";
          if (!list || list.tagName.toLowerCase() !== tag) { list = el(tag); container.append(list); }
          list.append(el("li", {text: (bullet || numbered)[1]}));
          paragraph = null;
        } else if (line.trim()) {
          list = null;
          if (paragraph) paragraph.append(el("br")); else { paragraph = el("p"); container.append(paragraph); }
          paragraph.append(document.createTextNode(line));
        }
      }
    }
  }

  // -- access ----------------------------------------------------------------------------------------------
  async function signIn(key) {
    await api("/api/login", {method: "POST", json: {key}});
  }

  async function checkAccess() {
    const access = await api("/api/access");
    if (!access.key_required || access.signed_in) return true;
    const fromUrl = new URLSearchParams(location.hash.slice(1)).get("key");
    if (fromUrl) {
      history.replaceState(null, "", location.pathname);  // the key leaves the address bar
      try { await signIn(fromUrl); return true; } catch (err) { message(err.message); }
    }
    show($("login"), true);
    return false;
  }

  $("login-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    try {
      await signIn($("login-key").value);
      $("login-key").value = "";
      show($("login"), false);
      await start();
    } catch (err) { message(err.message); }
  });

  // -- papers ----------------------------------------------------------------------------------------------
  function renderPapers() {
    const list = $("papers");
    list.replaceChildren();
    for (const paper of state.papers) {
      const box = el("input");
      box.type = "checkbox";
      box.value = paper.pdf_id;
      box.checked = state.selected.has(paper.pdf_id);
      box.addEventListener("change", () => {
        if (box.checked) state.selected.add(paper.pdf_id); else state.selected.delete(paper.pdf_id);
        renderScope();
      });
      const meta = [paper.venue, plural(paper.pages, "page")].filter(Boolean).join(" · ");
      const label = el("label", {title: paper.pdf_id}, box,
        el("span", null, el("span", {cls: "title", text: paper.title}), el("span", {cls: "meta", text: meta})));
      const item = el("li", null, label);
      item.dataset.key = `${paper.title} ${paper.venue}`.toLowerCase();
      item.dataset.pdfId = paper.pdf_id;
      list.append(item);
    }
    $("paper-count").textContent = `(${state.papers.length})`;
    filterPapers();
    renderScope();
  }

  function filterPapers() {
    const words = $("paper-filter").value.toLowerCase().split(/\s+/).filter(Boolean);
    for (const item of $("papers").children) {
      item.hidden = !words.every((w) => item.dataset.key.includes(w));
    }
  }

  function renderScope() {
    for (const id of [...state.selected]) if (!state.papers.some((p) => p.pdf_id === id)) state.selected.delete(id);
    const n = state.selected.size;
    $("scope-line").textContent = n ? `Asking about ${n} selected paper${n === 1 ? "" : "s"}`
      : `Asking about all ${plural(state.papers.length, "paper")}`;
    show($("scope-clear"), n > 0);
  }

  $("paper-filter").addEventListener("input", filterPapers);
  $("scope-clear").addEventListener("click", () => { state.selected.clear(); renderPapers(); });

  async function loadStore() {
    const info = await api("/api/store");
    $("store-name").textContent = info.store;
    $("store-facts").textContent = plural(info.papers.length, "paper");
    state.papers = info.papers;
    state.maxQuestion = info.max_question_chars || state.maxQuestion;
    state.maxUploadMb = info.max_upload_mb || state.maxUploadMb;
    renderPapers();
    countQuestion();
    if (!state.configs.length) {
      state.configs = info.configs;
      const select = $("config");
      for (const c of info.configs) {
        const option = el("option", {text: c.label, title: c.description});
        option.value = c.name;
        option.selected = c.name === info.default_config;
        select.append(option);
      }
      describeConfig();
    }
    if (!info.ready) {
      setStatus("opening the store's indexes…");
      setTimeout(() => loadStore().catch((err) => message(err.message)), 1000);
    } else if ($("status").textContent.startsWith("opening")) {
      setStatus("");
    }
  }

  function describeConfig() {
    const chosen = state.configs.find((c) => c.name === $("config").value);
    $("config-help").textContent = chosen ? chosen.description : "";
  }
  $("config").addEventListener("change", describeConfig);

  // -- the question ----------------------------------------------------------------------------------------
  function countQuestion() {
    const n = $("question").value.length;
    const over = n > state.maxQuestion;
    const counter = $("question-length");
    counter.textContent = n > state.maxQuestion * 0.8 ? `${number(n)} / ${number(state.maxQuestion)}` : "";
    counter.classList.toggle("over", over);
    $("question").classList.toggle("too-long", over);
  }
  $("question").addEventListener("input", countQuestion);
  $("question").addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      $("ask-form").requestSubmit();
    }
  });

  function setRunning(running) {
    $("ask").disabled = running;
    $("stop").disabled = !running;
    setStatus(running ? "answering…" : "");
  }

  // -- the run: steps stream in under the answer, collapsed, one line each -----------------------------------
  function stepItem(event) {
    const head = el("summary", null, el("span", {cls: "n", text: `${event.n}.`}),
      el("span", {cls: "line", text: event.summary || event.action}));
    const raw = el("div", {cls: "raw"});
    if (event.thought) raw.append(el("p", {cls: "thought", text: event.thought}));
    raw.append(el("span", {cls: "label", text: event.action}));
    if (event.detail) raw.append(el("code", {cls: "detail", text: event.detail}));
    const running = event.observation === null && event.node === "decide" && event.action !== "answer";
    if (event.observation !== null && event.observation !== undefined) {
      raw.append(el("pre", {cls: "obs", text: event.observation}));
    } else if (running) {
      raw.append(el("pre", {cls: "obs waiting", text: "running…"}));
    }
    const item = el("li", {cls: "step" + (running ? " running" : "")}, el("details", null, head, raw));
    item.dataset.n = String(event.n);
    return item;
  }

  function setWorking(text) {
    show($("working"), Boolean(text));
    $("working-line").textContent = text || "";
  }

  function countSteps() {
    const n = $("steps").querySelectorAll("li.step").length;
    $("steps-count").textContent = n ? `· ${plural(n, "step")}` : "";
  }

  function onEvent(event) {
    const steps = $("steps");
    if (event.type === "step") {
      steps.append(stepItem(event));
      countSteps();
      setWorking(`${event.summary || event.action}`);
      if (state.timings.firstStepMs === undefined && state.askedAt !== undefined) {
        state.timings.firstStepMs = performance.now() - state.askedAt;
      }
    } else if (event.type === "observation") {
      const item = steps.querySelector(`li[data-n="${Number(event.n)}"]`);
      if (item) {
        item.classList.remove("running");
        if (event.summary) item.querySelector(".line").textContent = event.summary;
        const obs = el("pre", {cls: "obs", text: event.observation});
        const waiting = item.querySelector(".obs");
        if (waiting) waiting.replaceWith(obs); else item.querySelector(".raw").append(obs);
      }
      if (event.summary) setWorking(event.summary);
    } else if (event.type === "status") {
      steps.append(el("li", {cls: "status", text: event.message}));
      setWorking(event.message);
    } else if (event.type === "answer" || event.type === "error" || event.type === "stopped") {
      if (state.timings.answerMs === undefined && state.askedAt !== undefined) {
        state.timings.answerMs = performance.now() - state.askedAt;
      }
      for (const waiting of steps.querySelectorAll(".obs.waiting")) waiting.textContent = "(not run)";
      for (const item of steps.querySelectorAll("li.running")) item.classList.remove("running");
      renderAnswer(event);
      if (event.type === "error") message(event.error || "The question failed.");
    } else if (event.type === "done") {
      finishRun();
    }
  }

  function finishRun() {
    if (state.source) { state.source.close(); state.source = null; }
    state.run = null;
    setWorking("");
    setRunning(false);
    loadHistory().catch((err) => message(err.message));
  }

  const KIND_WORDS = {chunk: "passage", table: "table", figure: "figure", equation: "equation", reference: "reference",
    section: "section", page: "page", metadata: "paper record", passage: "passage"};

  function sourceLabel(c) {
    return `${c.title}, p. ${c.page_number}${c.kind && c.kind !== "page" ? " · " + (KIND_WORDS[c.kind] || c.kind) : ""}`;
  }

  // "Table 2 · p. 8": what a source is, by the number its caption gives it, else by its kind
  const NUMBERED_CAPTION = /^\s*(Table|Tab\.|Figure|Fig\.)\s*([A-Z]?\d+(?:\.\d+)?)/i;
  function sourceWhat(kind, caption, page) {
    const named = kind === "table" || kind === "figure" ? NUMBERED_CAPTION.exec(caption || "") : null;
    const word = KIND_WORDS[kind] || kind || "page";
    const label = named ? `${/^t/i.test(named[1]) ? "Table" : "Figure"} ${named[2]}`
      : word.charAt(0).toUpperCase() + word.slice(1);
    return kind === "page" ? `Page ${page}` : `${label} · p. ${page}`;
  }

  function renderAnswer(view) {
    setWorking("");
    state.answer = view;
    state.passages = new Map();
    const answer = $("answer");
    show(answer, true);
    if (view.status === "answered") {
      answer.className = "answer" + (view.answer.length <= 60 && !view.answer.includes("\n") ? " short" : "");
      textBlocks(answer, view.answer);
    } else if (view.status === "no_answer") {
      answer.className = "answer none";
      textBlocks(answer, view.no_answer || "No answer.");
    } else if (view.status === "stopped") {
      answer.className = "answer none";
      answer.textContent = "Stopped.";
    } else {
      answer.className = "answer error";
      answer.textContent = `Error: ${view.error || "the question failed"}`;
    }
    const citations = view.citations || [];
    const marks = $("citation-marks");
    const list = $("sources");
    marks.replaceChildren();
    list.replaceChildren();
    citations.forEach((c, i) => {
      const usable = c.exists !== false;
      const mark = el("button", {cls: "mark", text: String(i + 1), title: sourceLabel(c)});
      mark.type = "button";
      mark.disabled = !usable;
      mark.dataset.index = String(i);
      const what = el("span", {cls: "what", text: usable ? "" : "not a page of this store"});
      const button = el("button", {title: usable ? "show it on its page" : "not a page of this store"},
        el("span", {cls: "num", text: `[${i + 1}]`}), el("span", {cls: "where", text: sourceWhat(c.kind, "", c.page_number)}),
        what, el("span", {cls: "paper", text: c.title}));
      button.type = "button";
      button.disabled = !usable;
      button.dataset.index = String(i);
      for (const control of [mark, button]) {
        control.addEventListener("click", () => showCitation(i, false).catch((err) => message(err.message)));
      }
      marks.append(mark);
      list.append(el("li", null, button));
    });
    show(marks, citations.length > 0);
    show($("sources-box"), citations.length > 0);
    const facts = [view.config];
    if (view.turns) facts.push(`${plural(view.turns, "turn")} (${(view.actions || []).join(", ")})`);
    if (view.seconds) facts.push(`${view.seconds.toFixed(1)} s`);
    $("answer-facts").textContent = facts.filter(Boolean).join(" · ");
    const trace = $("trace-link");
    if (view.trace_url && /^\/trace\/[\w-]+$/.test(view.trace_url)) {
      trace.href = view.trace_url;
      show(trace, true);
    } else {
      show(trace, false);
    }
    prefetch(citations, view);
    const first = citations.findIndex((c) => c.exists !== false);
    if (first >= 0) showCitation(first, true).catch((err) => message(err.message));
  }

  function openRun(question) {
    show($("run"), true);
    $("run-question").textContent = question;
    $("steps").replaceChildren();
    countSteps();
    show($("answer"), false);
    show($("citation-marks"), false);
    show($("sources-box"), false);
    $("answer-facts").textContent = "";
    show($("trace-link"), false);
    $("steps-box").open = false;
    state.answer = null;
  }

  $("ask-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    if (state.run) return;
    const question = $("question").value.trim();
    if (!question) { message("Type a question first.", "info"); return; }
    if (question.length > state.maxQuestion) {
      message(`The question is ${number(question.length)} characters long; the limit is ${number(state.maxQuestion)}. ` +
              "Shorten it, or ask about one part at a time.");
      return;
    }
    state.askedAt = performance.now();
    delete state.timings.firstStepMs;
    delete state.timings.answerMs;
    setRunning(true);
    openRun(visible(question));
    setWorking("sending the question…");
    try {
      const started = await api("/api/ask", {method: "POST", json: {
        question, config: $("config").value, pdf_ids: [...state.selected],
        answer_format: $("answer-format").value.trim() || "A short answer in plain text."}});
      state.run = started;
      follow(started);
    } catch (err) {
      setRunning(false);
      renderAnswer({status: "error", error: err.message, config: $("config").value, citations: []});
      message(err.message);
    }
  });

  function follow(started) {
    const source = new EventSource(started.events_url);
    state.source = source;
    source.onmessage = (msg) => {
      let event;
      try { event = JSON.parse(msg.data); } catch (err) { return; }
      onEvent(event);
    };
    source.onerror = () => {
      // EventSource reconnects by itself (resuming after the last event it saw); say so only when it gives up
      if (source.readyState === EventSource.CLOSED && state.source === source) {
        message("Lost the connection to the server while answering.");
        finishRun();
      }
    };
  }

  $("stop").addEventListener("click", async () => {
    const run = state.run;
    if (!run) return;
    $("stop").disabled = true;
    setStatus("stopping…");
    try { await api(run.stop_url, {method: "POST"}); } catch (err) { message(err.message); }
  });

  // -- sources on their pages --------------------------------------------------------------------------------
  const pageImageUrl = (pdfId, page) => `/api/pages/${encodeURIComponent(pdfId)}/${Number(page)}.png`;

  function passageOf(index) {
    if (!state.passages.has(index)) {
      const view = state.answer || {};
      const c = (view.citations || [])[index];
      const query = new URLSearchParams({pdf_id: c.pdf_id, page: String(c.page_number), source: c.source || "",
        answer: (view.answer || "").slice(0, 2000), question: (view.question || "").slice(0, 2000)});
      const pending = api(`/api/passage?${query}`);
      pending.catch(() => state.passages.delete(index));  // asked again on the click
      state.passages.set(index, pending);
    }
    return state.passages.get(index);
  }

  // The cited pages and passages are fetched as soon as the answer is in (the server renders each page once, the
  // browser keeps it), so a click shows its page at once; each source's line then says what it holds.
  function prefetch(citations, view) {
    const pages = new Set();
    citations.forEach((c, i) => {
      if (c.exists === false || i >= 8) return;
      pages.add(pageImageUrl(c.pdf_id, c.page_number));
      passageOf(i).then((passage) => {
        if (state.answer !== view) return;
        const button = $("sources").querySelector(`button[data-index="${i}"]`);
        if (!button) return;
        const caption = passage.table ? passage.table.caption : passage.text;
        button.querySelector(".where").textContent = sourceWhat(passage.kind, caption, passage.page_number);
        const said = passage.focus_text || (passage.table && passage.table.caption) || passage.text || "";
        button.querySelector(".what").textContent = said.slice(0, 300);
      }).catch(() => {});
    });
    for (const url of [...pages].slice(0, 6)) new Image().src = url;
  }

  function loadImage(url) {
    const img = $("page-img");
    return new Promise((resolve, reject) => {
      if (img.getAttribute("src") === url && img.complete && img.naturalWidth) { resolve(); return; }
      img.onload = () => resolve();
      img.onerror = () => reject(new Error("The page image could not be shown (its PDF may have moved)."));
      img.src = url;
    });
  }

  function placeBox(node, box, passage) {
    if (!box) { show(node, false); return; }
    const [x, y, w, h] = box;
    node.style.left = `${(100 * x) / passage.page_width}%`;
    node.style.top = `${(100 * y) / passage.page_height}%`;
    node.style.width = `${(100 * w) / passage.page_width}%`;
    node.style.height = `${(100 * h) / passage.page_height}%`;
    show(node, true);
  }

  // The highlighted lines (or the cited region) in the middle of the page's box, whatever was scrolled before.
  function bringIntoView(box, passage) {
    const scroller = $("page-scroll");
    if (!box) { scroller.scrollTop = 0; scroller.scrollLeft = 0; return; }
    const img = $("page-img");
    const centre = (start, size, total, pixels, view) =>
      ((start + size / 2) / total) * pixels - view / 2;
    const top = centre(box[1], box[3], passage.page_height, img.clientHeight, scroller.clientHeight);
    const left = centre(box[0], box[2], passage.page_width, img.clientWidth, scroller.clientWidth);
    scroller.scrollTop = Math.max(0, Math.min(top, scroller.scrollHeight - scroller.clientHeight));
    scroller.scrollLeft = Math.max(0, Math.min(left, scroller.scrollWidth - scroller.clientWidth));
  }

  const ZOOMS = [1, 1.5, 2, 3];
  function setZoom(zoom) {
    state.zoom = zoom;
    $("page-wrap").style.width = `${zoom * 100}%`;
    $("zoom-out").disabled = zoom <= ZOOMS[0];
    $("zoom-in").disabled = zoom >= ZOOMS[ZOOMS.length - 1];
    const v = state.viewed;
    if (v && v.passage && v.passage.page_number === v.page) bringIntoView(v.passage.focus || v.passage.box, v.passage);
  }
  $("zoom-in").addEventListener("click", () => setZoom(ZOOMS.find((z) => z > state.zoom) || state.zoom));
  $("zoom-out").addEventListener("click", () => setZoom([...ZOOMS].reverse().find((z) => z < state.zoom) || state.zoom));

  function renderTable(table, focusText) {
    const wrap = $("passage-table");
    wrap.replaceChildren();
    if (!table) { show(wrap, false); return; }
    const words = new Set(String(focusText || "").split(/\s+/).filter(Boolean));
    const node = el("table");
    if (table.caption) node.append(el("caption", {text: table.caption}));
    const head = el("thead");
    const body = el("tbody");
    table.rows.forEach((row, r) => {
      const isHead = r < (table.header_rows || 0);
      const tr = el("tr");
      const filled = row.filter((cell) => cell.trim());
      if (!isHead && filled.length >= 2 && filled.every((cell) => cell.split(/\s+/).every((w) => words.has(w)))) {
        tr.className = "hit";  // the row the answer was read from
      }
      for (const cell of row) tr.append(el(isHead ? "th" : "td", {text: cell}));
      (isHead ? head : body).append(tr);
    });
    node.append(head, body);
    wrap.append(node);
    const cut = [];
    if (table.cut_rows) cut.push(plural(table.cut_rows, "more row"));
    if (table.cut_columns) cut.push(plural(table.cut_columns, "more column"));
    if (cut.length) wrap.append(el("p", {cls: "cut", text: `${cut.join(", ")} in the store`}));
    show(wrap, true);
  }

  function markSources(index) {
    for (const node of document.querySelectorAll("#sources button, #citation-marks button")) {
      node.classList.toggle("active", Number(node.dataset.index) === index);
    }
  }

  async function showCitation(index, auto) {
    const clicked = performance.now();
    const token = ++state.viewToken;
    const c = ((state.answer || {}).citations || [])[index];
    if (!c) return;
    markSources(index);
    show($("viewer-hint"), false);
    $("viewer").dataset.shown = "";
    let pending = loadImage(pageImageUrl(c.pdf_id, c.page_number));  // the image and the passage load side by side
    pending.catch(() => {});
    const passage = await passageOf(index);
    if (token !== state.viewToken) return;
    if (passage.page_number !== c.page_number) pending = loadImage(pageImageUrl(passage.pdf_id, passage.page_number));
    $("viewer-title").textContent = `[${index + 1}] ${passage.title}`;
    $("passage-note").textContent = passage.note || "";
    $("passage-kind").textContent = passage.kind === "page" ? "The page's text"
      : `Cited ${KIND_WORDS[passage.kind] || passage.kind}`;
    renderTable(passage.table, passage.focus_text);
    $("passage-text").textContent = passage.table ? "" : passage.text;
    show($("passage-box"), true);
    show($("region"), false);
    show($("focus"), false);
    show($("page-scroll"), true);
    await pending;
    if (token !== state.viewToken) return;
    state.viewed = {pdfId: passage.pdf_id, page: passage.page_number, pageCount: passage.page_count, passage};
    renderPager();
    placeBox($("region"), passage.box, passage);
    placeBox($("focus"), passage.focus, passage);
    bringIntoView(passage.focus || passage.box, passage);
    const hit = $("passage-table").querySelector("tr.hit");
    const panel = $("passage-box");
    panel.scrollTop = hit ? Math.max(0, hit.offsetTop - panel.clientHeight / 2) : 0;
    const ms = performance.now() - clicked;
    if (!auto) state.timings.pageShownMs = ms;
    $("viewer").dataset.shown = `${passage.pdf_id}:${passage.page_number}`;
    window.evidexView = {seq: window.evidexView.seq + 1, index, pdfId: passage.pdf_id, page: passage.page_number,
      ms, auto: Boolean(auto)};
  }

  function renderPager() {
    const v = state.viewed;
    show($("pager"), Boolean(v));
    if (!v) return;
    $("page-label").textContent = `page ${v.page} of ${v.pageCount || "?"}`;
    $("page-prev").disabled = v.page <= 1;
    $("page-next").disabled = Boolean(v.pageCount) && v.page >= v.pageCount;
  }

  async function turnPage(step) {
    const v = state.viewed;
    if (!v) return;
    const token = ++state.viewToken;
    const page = v.page + step;
    await loadImage(pageImageUrl(v.pdfId, page));
    if (token !== state.viewToken) return;
    v.page = page;
    renderPager();
    const cited = v.passage && v.passage.page_number === page;  // back on the cited page: its marks again
    placeBox($("region"), cited ? v.passage.box : null, v.passage);
    placeBox($("focus"), cited ? v.passage.focus : null, v.passage);
    if (cited) bringIntoView(v.passage.focus || v.passage.box, v.passage); else $("page-scroll").scrollTop = 0;
  }
  $("page-prev").addEventListener("click", () => turnPage(-1).catch((err) => message(err.message)));
  $("page-next").addEventListener("click", () => turnPage(1).catch((err) => message(err.message)));

  // -- history ---------------------------------------------------------------------------------------------
  async function loadHistory() {
    const entries = await api("/api/history");
    const list = $("history");
    list.replaceChildren();
    for (const entry of entries) {
      const when = entry.asked_at ? new Date(entry.asked_at).toLocaleString() : "";
      const what = entry.status === "answered" ? entry.answer : entry.status.replace("_", " ");
      const item = el("li", {title: "show this answer again"}, el("span", {cls: "q", text: entry.question}),
        el("span", {cls: "meta", text: [what, when].filter(Boolean).join(" · ")}));
      item.tabIndex = 0;
      const open = () => {
        if (state.run) return;
        $("question").value = entry.question;
        countQuestion();
        openRun(entry.question);
        renderAnswer(entry);
      };
      item.addEventListener("click", open);
      item.addEventListener("keydown", (e) => { if (e.key === "Enter") open(); });
      list.append(item);
    }
    $("history-count").textContent = `(${entries.length})`;
  }

  // -- uploads ---------------------------------------------------------------------------------------------
  function uploadOne(file) {
    const name = el("span", {cls: "name", text: visible(file.name)});
    const bar = el("progress");
    bar.max = 100;
    bar.value = 0;
    const status = el("span", {cls: "state", text: "uploading…"});
    const item = el("li", {cls: "upload"}, name, bar, status);
    $("uploads").prepend(item);
    const finish = (cls, text) => {
      bar.remove();
      item.classList.add(cls);
      status.textContent = text;
    };
    if (file.size > state.maxUploadMb * 1048576) {  // the server would refuse it after the first megabytes
      finish("failed", `failed: larger than ${state.maxUploadMb} MB, this server's limit for one PDF`);
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const xhr = new XMLHttpRequest();
      xhr.open("POST", "/api/upload");
      xhr.setRequestHeader("X-Evidex-Request", "1");
      xhr.upload.onprogress = (e) => { if (e.lengthComputable) bar.value = Math.round((100 * e.loaded) / e.total); };
      xhr.upload.onload = () => { bar.value = 100; status.textContent = "ingesting (parsing, indexing; after a running question)…"; };
      xhr.onload = () => {
        let data = null;
        try { data = JSON.parse(xhr.responseText); } catch (err) { data = null; }
        if (xhr.status !== 200 || !data) {
          finish("failed", `failed: ${data && data.error ? data.error : "the server answered " + xhr.status}`);
        } else if (data.status === "failed") {
          finish("failed", `failed: ${data.error || data.error_kind || "not ingested"}`);
        } else if (data.status === "skipped") {
          finish("ok", "already in the store");
        } else {
          finish("ok", `ingested: ${data.title || data.saved_as} (${plural(data.pages, "page")}, ${data.seconds} s)`);
        }
        resolve();
      };
      xhr.onerror = () => { finish("failed", "failed: the server cannot be reached"); resolve(); };
      const form = new FormData();
      form.append("file", file);
      xhr.send(form);
    });
  }

  async function uploadAll(files) {
    const pdfs = [...files];
    if (!pdfs.length) return;
    for (const file of pdfs) await uploadOne(file);  // one at a time: the store takes one writer
    await loadStore().catch((err) => message(err.message));
  }

  $("upload-input").addEventListener("change", (e) => {
    const files = [...e.target.files];
    e.target.value = "";
    uploadAll(files);
  });
  const zone = $("dropzone");
  zone.addEventListener("dragover", (e) => { e.preventDefault(); zone.classList.add("over"); });
  zone.addEventListener("dragleave", () => zone.classList.remove("over"));
  zone.addEventListener("drop", (e) => {
    e.preventDefault();
    zone.classList.remove("over");
    uploadAll(e.dataTransfer.files);
  });

  // -- start -----------------------------------------------------------------------------------------------
  window.addEventListener("error", (e) => message(`The page failed: ${e.message}`));
  window.addEventListener("unhandledrejection", (e) => message(`The page failed: ${e.reason && e.reason.message ? e.reason.message : e.reason}`));

  async function start() {
    show($("main"), true);
    await loadStore();
    await loadHistory();
    $("question").focus();
  }

  (async () => {
    try {
      if (await checkAccess()) await start();
    } catch (err) {
      show($("main"), true);
      message(err.message);
    }
  })();
})();
