// evidex web page. Every string from the store, the model or a user goes into the page as text (textContent),
// never as markup; the server's Content-Security-Policy allows only this file as script.
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);
  const state = {
    papers: [], selected: new Set(), configs: [], run: null, source: null, answerText: "",
    timings: {},  // read by the browser tests and benchmarks/web_page.py: ask -> first step / answer, click -> page shown (ms)
  };
  window.evidexTimings = state.timings;

  // -- small helpers ---------------------------------------------------------------------------------------
  function el(tag, props, ...children) {
    const node = document.createElement(tag);
    const p = props || {};
    if (p.cls) node.className = p.cls;
    if (p.text !== undefined && p.text !== null) node.textContent = String(p.text);
    if (p.title) node.title = String(p.title);
    for (const child of children) if (child) node.append(child);
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
      throw new Error("The server cannot be reached (is python -m graphs.web still running?).");
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

  // Bidirectional, zero-width and control characters in what the user typed or named (the server marks the rest
  // the same way, tools/safe_text.py): shown as visible marks, so U+202E cannot draw a name reversed.
  const HIDDEN = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u00ad\u034f\u115f\u1160\u17b4\u17b5\u180e\u200b-\u200d\u2060-\u2064\ufeff]/g;
  const visible = (text) => String(text).replace(HIDDEN,
    (ch) => `\u27e8U+${ch.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")}\u27e9`);

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
      const meta = [paper.venue, `${paper.pages} page${paper.pages === 1 ? "" : "s"}`].filter(Boolean).join(" · ");
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
      : `Asking about all ${state.papers.length} paper${state.papers.length === 1 ? "" : "s"}`;
    show($("scope-clear"), n > 0);
  }

  $("paper-filter").addEventListener("input", filterPapers);
  $("scope-clear").addEventListener("click", () => { state.selected.clear(); renderPapers(); });

  async function loadStore() {
    const info = await api("/api/store");
    $("store-name").textContent = info.store;
    $("store-facts").textContent = `${info.papers.length} paper${info.papers.length === 1 ? "" : "s"}`;
    state.papers = info.papers;
    renderPapers();
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
    $("config-help").textContent = chosen ? `${chosen.name}: ${chosen.description}` : "";
  }
  $("config").addEventListener("change", describeConfig);

  // -- asking ----------------------------------------------------------------------------------------------
  function setRunning(running) {
    $("ask").disabled = running;
    $("stop").disabled = !running;
    setStatus(running ? "answering…" : "");
  }

  function stepItem(event) {
    const head = el("div", {cls: "head"}, el("span", {cls: "n", text: `${event.n}.`}),
      el("span", {cls: "action", text: event.action}));
    if (event.thought) head.append(el("span", {cls: "thought", text: event.thought}));
    const item = el("li", {cls: "step"}, head);
    item.dataset.n = String(event.n);
    if (event.detail) item.append(el("code", {cls: "detail", text: event.detail}));
    if (event.observation !== null && event.observation !== undefined) {
      item.append(el("span", {cls: "obs", text: event.observation}));
    } else if (event.node === "decide" && event.action !== "answer") {
      item.append(el("span", {cls: "obs waiting", text: "running…"}));
    }
    return item;
  }

  function onEvent(event) {
    const steps = $("steps");
    if (event.type === "step") {
      steps.append(stepItem(event));
      if (state.timings.firstStepMs === undefined && state.askedAt !== undefined) {
        state.timings.firstStepMs = performance.now() - state.askedAt;
      }
    } else if (event.type === "observation") {
      const item = steps.querySelector(`li[data-n="${Number(event.n)}"]`);
      if (item) {
        const waiting = item.querySelector(".obs");
        const obs = el("span", {cls: "obs", text: event.observation});
        if (waiting) waiting.replaceWith(obs); else item.append(obs);
      }
    } else if (event.type === "status") {
      steps.append(el("li", {cls: "status", text: event.message}));
    } else if (event.type === "answer" || event.type === "error" || event.type === "stopped") {
      if (state.timings.answerMs === undefined && state.askedAt !== undefined) {
        state.timings.answerMs = performance.now() - state.askedAt;
      }
      for (const waiting of steps.querySelectorAll(".obs.waiting")) waiting.textContent = "(not run)";
      renderAnswer(event);
      if (event.type === "error") message(event.error || "The question failed.");
    } else if (event.type === "done") {
      finishRun();
    }
  }

  function finishRun() {
    if (state.source) { state.source.close(); state.source = null; }
    state.run = null;
    setRunning(false);
    loadHistory().catch((err) => message(err.message));
  }

  function renderAnswer(view) {
    show($("answer-box"), true);
    const answer = $("answer");
    state.answerText = view.answer || "";
    if (view.status === "answered") {
      answer.className = "answer";
      answer.textContent = view.answer;
    } else if (view.status === "no_answer") {
      answer.className = "answer none";
      answer.textContent = view.no_answer || "No answer.";
    } else if (view.status === "stopped") {
      answer.className = "answer none";
      answer.textContent = "Stopped.";
    } else {
      answer.className = "answer error";
      answer.textContent = `Error: ${view.error || "the question failed"}`;
    }
    const chips = $("citations");
    chips.replaceChildren();
    for (const c of view.citations || []) {
      const chip = el("button", {text: `${c.title}, p. ${c.page_number}${c.kind !== "page" ? " · " + c.kind : ""}`,
        title: c.exists === false ? "not a page of this store" : (c.source || `page ${c.page_number}`)});
      chip.type = "button";
      chip.disabled = c.exists === false;
      chip.addEventListener("click", () => {
        for (const other of chips.children) other.classList.remove("active");
        chip.classList.add("active");
        showCitation(c, view.answer || "", view.question || "").catch((err) => message(err.message));
      });
      chips.append(chip);
    }
    prefetchPages(view.citations || []);
    const facts = [view.config];
    if (view.turns) facts.push(`${view.turns} turn${view.turns === 1 ? "" : "s"} (${(view.actions || []).join(", ")})`);
    if (view.seconds) facts.push(`${view.seconds.toFixed(1)} s`);
    $("answer-facts").textContent = facts.join(" · ");
    const trace = $("trace-link");
    if (view.trace_url && /^\/trace\/[\w-]+$/.test(view.trace_url)) {
      trace.href = view.trace_url;
      show(trace, true);
    } else {
      show(trace, false);
    }
  }

  function openRun(question) {
    show($("run"), true);
    $("run-title").textContent = "Steps";
    $("run-question").textContent = question;
    $("steps").replaceChildren();
    show($("answer-box"), false);
    $("citations").replaceChildren();
  }

  $("ask-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    if (state.run) return;
    const question = $("question").value.trim();
    if (!question) { message("Type a question first.", "info"); return; }
    state.askedAt = performance.now();
    delete state.timings.firstStepMs;
    delete state.timings.answerMs;
    setRunning(true);
    openRun(visible(question));
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

  // -- cited pages -----------------------------------------------------------------------------------------
  const pageImageUrl = (pdfId, page) => `/api/pages/${encodeURIComponent(pdfId)}/${Number(page)}.png`;

  // The cited pages are fetched as soon as the answer is in (the server renders each once, the browser keeps it),
  // so a click shows its page at once.
  function prefetchPages(citations) {
    const urls = new Set(citations.filter((c) => c.exists !== false).map((c) => pageImageUrl(c.pdf_id, c.page_number)));
    for (const url of [...urls].slice(0, 6)) new Image().src = url;
  }

  async function showCitation(c, answer, question) {
    const clicked = performance.now();
    const img = $("page-img");
    const hl = $("highlight");
    show($("viewer-hint"), false);
    show($("page-wrap"), true);
    show(hl, false);
    $("viewer").dataset.shown = "";
    const imageUrl = (page) => pageImageUrl(c.pdf_id, page);
    const loaded = (url) => new Promise((resolve, reject) => {
      if (img.getAttribute("src") === url && img.complete && img.naturalWidth) { resolve(); return; }
      img.onload = () => resolve();
      img.onerror = () => reject(new Error("The page image could not be shown (its PDF may have moved)."));
      img.src = url;
    });
    let pending = loaded(imageUrl(c.page_number));  // the image and the passage load side by side
    const query = new URLSearchParams({pdf_id: c.pdf_id, page: String(c.page_number), source: c.source || "",
      answer: (answer || "").slice(0, 2000), question: (question || "").slice(0, 2000)});
    const passage = await api(`/api/passage?${query}`);
    if (passage.page_number !== c.page_number) pending = loaded(imageUrl(passage.page_number));
    $("viewer-title").textContent = `${passage.title} · page ${passage.page_number} of ${passage.page_count}`;
    $("passage-kind").textContent = `Cited ${passage.kind}`;
    $("passage-note").textContent = passage.note || "";
    $("passage-text").textContent = passage.text;
    await pending;
    if (passage.box) {
      const [x, y, w, h] = passage.box;
      hl.style.left = `${(100 * x) / passage.page_width}%`;
      hl.style.top = `${(100 * y) / passage.page_height}%`;
      hl.style.width = `${(100 * w) / passage.page_width}%`;
      hl.style.height = `${(100 * h) / passage.page_height}%`;
      show(hl, true);
    }
    state.timings.pageShownMs = performance.now() - clicked;
    $("viewer").dataset.shown = `${passage.pdf_id}:${passage.page_number}`;
  }

  // -- history ---------------------------------------------------------------------------------------------
  async function loadHistory() {
    const entries = await api("/api/history");
    const list = $("history");
    list.replaceChildren();
    for (const entry of entries) {
      const when = entry.asked_at ? new Date(entry.asked_at).toLocaleString() : "";
      const what = entry.status === "answered" ? entry.answer : entry.status.replace("_", " ");
      const item = el("li", {title: "show this answer"}, el("span", {cls: "q", text: entry.question}),
        el("span", {cls: "meta", text: [what, entry.config, when].filter(Boolean).join(" · ")}));
      item.tabIndex = 0;
      const open = () => {
        if (state.run) return;
        $("question").value = entry.question;
        openRun(entry.question);
        $("run-title").textContent = "From the history";
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
    return new Promise((resolve) => {
      const xhr = new XMLHttpRequest();
      xhr.open("POST", "/api/upload");
      xhr.setRequestHeader("X-Evidex-Request", "1");
      xhr.upload.onprogress = (e) => { if (e.lengthComputable) bar.value = Math.round((100 * e.loaded) / e.total); };
      xhr.upload.onload = () => { bar.value = 100; status.textContent = "ingesting (parsing, indexing; after a running question)…"; };
      const finish = (cls, text) => {
        bar.remove();
        item.classList.add(cls);
        status.textContent = text;
        resolve();
      };
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
          finish("ok", `ingested: ${data.title || data.saved_as} (${data.pages} page${data.pages === 1 ? "" : "s"}, ${data.seconds} s)`);
        }
      };
      xhr.onerror = () => finish("failed", "failed: the server cannot be reached");
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
