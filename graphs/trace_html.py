"""Render run trees (``traces/<item>.json``) as one self-contained HTML page: no CDN, no network, inline CSS/JS.

Per item a collapsible tree (``<details>``, so it folds even with JavaScript off); per node the run type, latency,
tokens, a timeline bar (offset and length within the item) and a token bar (share of the item's tokens); the
node's inputs and outputs as pretty JSON, with LLM prompts and replies shown as readable role-tagged messages;
errors in red with a ✗ on the node and on the item. A search box filters nodes by name, type, inputs, outputs
and error text; "errors only" keeps failed nodes and their ancestors.

    from evidex.graphs.trace_html import write_trace_html
    write_trace_html("trace.html", trace_tree.load_items(run_dir), info=trace_tree.run_info(run_dir))
"""
from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from evidex.tools.safe_text import csp_meta, html_text

MAX_PANEL_CHARS = 150_000  # per inputs/outputs panel; the rest is cut with a note (the JSON file has it all)
_ROLE_LINE = re.compile(r"^(System|Human|AI|Assistant|Tool|Function|Developer|Chat): ", re.M)
_MSG_ROLES = {"SystemMessage": "system", "HumanMessage": "human", "AIMessage": "ai", "ToolMessage": "tool",
              "FunctionMessage": "function", "ChatMessage": "chat", "AIMessageChunk": "ai",
              "HumanMessageChunk": "human", "SystemMessageChunk": "system", "ToolMessageChunk": "tool"}
_JSON_KEY = re.compile(r'^(\s*)(&quot;(?:[^&]|&(?!quot;))*?&quot;)(: )', re.M)


def esc(value: Any) -> str:
    return html_text(value)


# -- values -------------------------------------------------------------------------------------------------
def pretty_json(value: Any) -> str:
    """Escaped, indented JSON with keys highlighted; very long values are cut with a note."""
    try:
        text = json.dumps(value, indent=2, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        text = repr(value)
    cut = ""
    if len(text) > MAX_PANEL_CHARS:
        cut = f"\n… {len(text) - MAX_PANEL_CHARS:,} more characters (see the trace .json file)"
        text = text[:MAX_PANEL_CHARS]
    body = _JSON_KEY.sub(r'\1<span class="k">\2</span>\3', esc(text))
    return f'<pre class="json">{body}{esc(cut)}</pre>'


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict) and block.get("type") == "text":
                parts.append(str(block.get("text", "")))
            else:
                parts.append(json.dumps(block, ensure_ascii=False, default=str))
        return "\n".join(parts)
    return json.dumps(content, ensure_ascii=False, default=str)


def message_parts(msg: Any) -> tuple[str, str, dict[str, Any]] | None:
    """(role, text, extras) of a serialized LangChain message (``lc`` form, ``{type, content}`` or
    ``{role, content}``); None if ``msg`` is not message-like."""
    if not isinstance(msg, dict):
        return None
    if msg.get("lc") == 1 and isinstance(msg.get("kwargs"), dict):
        kind = (msg.get("id") or ["", "message"])[-1]
        kw = msg["kwargs"]
        role = _MSG_ROLES.get(kind, str(kw.get("type") or kind).lower())
    elif "content" in msg and ("type" in msg or "role" in msg):
        kw = msg
        role = str(msg.get("role") or msg.get("type"))
    else:
        return None
    extras = {k: kw[k] for k in ("tool_calls", "tool_call_id", "name", "usage_metadata") if kw.get(k)}
    return role, _content_text(kw.get("content", "")), extras


def split_prompt(text: str) -> list[tuple[str, str]]:
    """A flattened chat prompt ("System: ...\\nHuman: ...") back into (role, text) pairs."""
    matches = list(_ROLE_LINE.finditer(text))
    if not matches or matches[0].start() != 0:
        return [("prompt", text)]
    out = []
    for i, m in enumerate(matches):
        end = matches[i + 1].start() if i + 1 < len(matches) else len(text)
        out.append((m.group(1).lower(), text[m.end():end].rstrip("\n")))
    return out


def _message_html(role: str, text: str, extras: dict[str, Any] | None = None) -> str:
    role_class = {"human": "human", "user": "human", "system": "system", "ai": "ai", "assistant": "ai",
                  "tool": "tool"}.get(role.lower(), "other")
    extra = ""
    for key, value in (extras or {}).items():
        extra += f'<div class="msg-extra"><span class="k">{esc(key)}</span>{pretty_json(value)}</div>'
    if len(text) > MAX_PANEL_CHARS:
        text = text[:MAX_PANEL_CHARS] + f"\n… {len(text) - MAX_PANEL_CHARS:,} more characters"
    return (f'<div class="msg {role_class}"><div class="role">{esc(role)}</div>'
            f'<pre class="msg-text">{esc(text)}</pre>{extra}</div>')


def _messages_view(messages: Iterable[Any]) -> str | None:
    parts = []
    for msg in messages:
        got = message_parts(msg)
        if got is None:
            return None
        parts.append(_message_html(*got))
    return "".join(parts) if parts else None


def llm_inputs_html(inputs: dict[str, Any]) -> str:
    """Prompts/messages of an LLM call as role-tagged blocks."""
    blocks = []
    for prompt in inputs.get("prompts") or []:
        blocks += [_message_html(role, text) for role, text in split_prompt(str(prompt))]
    for batch in inputs.get("messages") or []:
        view = _messages_view(batch if isinstance(batch, list) else [batch])
        if view:
            blocks.append(view)
    return "".join(blocks)


def llm_outputs_html(outputs: dict[str, Any]) -> str:
    blocks = []
    for gens in outputs.get("generations") or []:
        for gen in gens or []:
            if not isinstance(gen, dict):
                continue
            got = message_parts(gen.get("message")) if gen.get("message") else None
            if got is None:
                got = ("ai", str(gen.get("text", "")), {})
            role, text, extras = got
            blocks.append(_message_html(role, text or str(gen.get("text", "")), extras))
    return "".join(blocks)


def io_panel(title: str, value: Any, run_type: str) -> str:
    if value in (None, {}, []):
        return ""
    readable = ""
    if isinstance(value, dict):
        if run_type in ("llm", "chat_model"):
            readable = llm_inputs_html(value) if title == "Inputs" else llm_outputs_html(value)
        elif isinstance(value.get("messages"), list):
            readable = _messages_view(value["messages"]) or ""
    raw = pretty_json(value)
    if readable:
        body = (f'<div class="messages">{readable}</div>'
                f'<details class="raw"><summary>raw JSON</summary>{raw}</details>')
    else:
        body = raw
    return f'<details class="io"><summary>{esc(title)}</summary>{body}</details>'


def error_html_block(err: str) -> str:
    """The error message in red; a Python traceback after it goes into a collapsed panel."""
    text = str(err)
    cut = text.find("Traceback (most recent call last)")
    head, tb = (text[:cut].rstrip(), text[cut:]) if cut > 0 else (text, "")
    tb_html = (f'<details class="io tb"><summary>traceback</summary><pre class="error">{esc(tb.strip())}</pre>'
               f'</details>') if tb else ""
    return f'<div class="errbox"><pre class="error">{esc(head)}</pre>{tb_html}</div>'


# -- tree ---------------------------------------------------------------------------------------------------
class _Ctx:
    def __init__(self, item_index: int, root: dict[str, Any]):
        from evidex.graphs.trace_tree import latency_s, parse_time

        self.item_index = item_index
        self.counter = 0
        self.t0 = parse_time(root.get("start_time"))
        self.span = max(latency_s(root) or 0.0, 1e-6)
        self.total_tokens = max(int(root.get("total_tokens") or 0), 1)


def _node_html(node: dict[str, Any], ctx: _Ctx, depth: int) -> str:
    from evidex.graphs.trace_tree import ERROR_MARK, first_line, fmt_latency, latency_s, parse_time, tokens_of

    ctx.counter += 1
    rt = str(node.get("run_type") or "?")
    name = str(node.get("name") or "?")
    err = node.get("error")
    lat = latency_s(node)
    p, c = tokens_of(node)
    start = parse_time(node.get("start_time"))
    offset = ((start - ctx.t0).total_seconds() / ctx.span * 100) if (start and ctx.t0) else 0.0
    width = max((lat or 0.0) / ctx.span * 100, 0.4)
    offset = min(max(offset, 0.0), 100 - width) if width < 100 else 0.0
    tok_w = (p + c) / ctx.total_tokens * 100
    children = node.get("child_runs") or []
    classes = f"node rt-{esc(rt)}" + (" err" if err else "")
    key = f"{name} {rt} {err or ''} {' '.join(node.get('tags') or [])}".lower()
    is_open = " open" if (depth < 2 or err) else ""
    marker = f'<span class="mark" title="error">{ERROR_MARK}</span>' if err else ""
    summary = (f'<summary class="row">{marker}<span class="name">{esc(name)}</span>'
               f'<span class="badge rt-{esc(rt)}">{esc(rt)}</span>'
               + (f'<span class="err-brief">{esc(first_line(err, 100))}</span>' if err else "")
               + '<span class="spacer"></span>'
               f'<span class="lat" title="latency">{esc(fmt_latency(lat))}</span>'
               f'<span class="tok" title="prompt → completion tokens">{f"{p}→{c}" if (p or c) else ""}</span>'
               f'<span class="tl" title="timeline within the item"><span class="tl-bar" '
               f'style="margin-left:{offset:.2f}%;width:{width:.2f}%"></span></span>'
               f'<span class="tb" title="share of the item\'s tokens"><span class="tb-bar" '
               f'style="width:{tok_w:.2f}%"></span></span></summary>')
    meta = {"id": node.get("id"), "parent_run_id": node.get("parent_run_id"),
            "start_time": node.get("start_time"), "end_time": node.get("end_time"),
            "tags": node.get("tags"), "metadata": (node.get("extra") or {}).get("metadata"),
            "tokens": {"prompt": p, "completion": c, "total": p + c}}
    error_html = error_html_block(err) if err else ""
    io = (io_panel("Inputs", node.get("inputs"), rt) + io_panel("Outputs", node.get("outputs"), rt)
          + f'<details class="io meta"><summary>Metadata</summary>{pretty_json(meta)}</details>')
    kids = "".join(_node_html(ch, ctx, depth + 1) for ch in children)
    kids_html = f'<div class="children">{kids}</div>' if kids else ""
    return (f'<div class="{classes}" id="n-{ctx.item_index}-{ctx.counter}" data-key="{esc(key)}">'
            f'<details class="nd"{is_open}>{summary}<div class="body">{error_html}'
            f'<div class="ios">{io}</div>{kids_html}</div></details></div>')


def _item_html(index: int, item, open_: bool) -> str:
    from evidex.graphs.trace_tree import ERROR_MARK, OK_MARK, count_nodes, first_line, fmt_latency, latency_s

    tree = item.tree
    row = item.row or {}
    err = item.error
    lat = row.get("latency_s", latency_s(tree) if tree else None)
    tok = row.get("tokens") or ({"prompt": tree.get("prompt_tokens", 0), "completion": tree.get("completion_tokens", 0)}
                                if tree else {})
    n, llm, n_err = count_nodes(tree) if tree else (0, 0, 0)
    tags = "".join(f'<span class="tag">{esc(t)}</span>' for t in row.get("tags", []))
    mark = (f'<span class="mark" title="error">{ERROR_MARK}</span>' if err
            else f'<span class="ok">{OK_MARK}</span>')
    stats = f"{fmt_latency(lat)} · {tok.get('prompt', 0)}→{tok.get('completion', 0)} tok · {n} nodes · {llm} LLM calls"
    head = (f'<summary class="item-head">{mark}<span class="item-id">{esc(item.id)}</span>{tags}'
            f'<span class="spacer"></span><span class="item-stats">{esc(stats)}</span></summary>')
    body = ""
    if err:
        body += error_html_block(f"{ERROR_MARK} {err}")
    if row.get("metrics"):
        shown = {k: v for k, v in row["metrics"].items() if isinstance(v, (int, float))}
        cells = "".join(f'<span class="metric"><span class="k">{esc(k)}</span> {"n/a" if v != v else f"{v:.3g}"}</span>'
                        for k, v in list(shown.items())[:24])
        body += f'<div class="metrics">{cells}</div>'
    if tree is not None:
        body += f'<div class="tree">{_node_html(tree, _Ctx(index, tree), 0)}</div>'
    else:
        body += '<p class="none">No trace file for this item (tracing off, or the item failed before it started).</p>'
    cls = "item" + (" err" if err else "")
    key = f"{item.id} {' '.join(row.get('tags', []))} {first_line(err) if err else ''}".lower()
    return (f'<details class="{cls}" id="item-{index}" data-key="{esc(key)}" data-errors="{n_err + bool(err)}"'
            f'{" open" if open_ else ""}>{head}<div class="item-body">{body}</div></details>')


def render_trace_html(items: list, info: dict[str, Any] | None = None, title: str | None = None) -> str:
    """The whole page for ``items`` (``graphs.trace.TraceItem``: ``id``, ``row``, ``tree``, ``error``)."""
    from evidex.graphs.trace_tree import ERROR_MARK, OK_MARK

    info = dict(info or {})
    run_id = str(info.get("run_id", "trace"))
    title = title or f"evidex trace · {run_id}"
    n_err = sum(bool(it.error) for it in items)
    tokens = sum(int((it.tree or {}).get("total_tokens") or 0) for it in items)
    facts = [("run", run_id)] + [(k, info[k]) for k in ("task", "config", "model", "status") if info.get(k)]
    facts += [("items", len(items)), ("errors", n_err), ("tokens", f"{tokens:,}")]
    header = "".join(f'<span class="fact{" bad" if k == "errors" and v else ""}"><span class="k">{esc(k)}</span> '
                     f'{esc(v)}</span>' for k, v in facts)
    nav = "".join(f'<li class="{"err" if it.error else ""}"><a href="#item-{i}" data-item="item-{i}">'
                  f'{ERROR_MARK if it.error else OK_MARK} {esc(it.id)}</a></li>' for i, it in enumerate(items))
    body = "".join(_item_html(i, it, open_=(i == 0)) for i, it in enumerate(items))
    if not items:
        body = '<p class="none">No items in this run yet.</p>'
    legend = "".join(f'<span class="badge rt-{rt}">{rt}</span>' for rt in ("chain", "llm", "tool", "retriever"))
    return _PAGE.format(title=esc(title), header=header, nav=nav, body=body, legend=legend, css=_CSS, js=_JS,
                        n_items=len(items), csp=csp_meta(_JS))


def write_trace_html(out: str | Path, items: list, info: dict[str, Any] | None = None,
                     title: str | None = None) -> Path:
    out = Path(out)
    if out.parent and not out.parent.exists():
        out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render_trace_html(items, info, title), encoding="utf-8")
    return out


_CSS = r"""
:root{--bg:#f7f7f9;--fg:#1d1f23;--muted:#6b7280;--line:#e3e5ea;--card:#fff;--err:#c62828;--errbg:#fdecea;
--chain:#0e7490;--llm:#9333ea;--tool:#b45309;--retriever:#15803d;--hit:#fff3b0}
*{box-sizing:border-box}
body{margin:0;font:14px/1.4 system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;background:var(--bg);color:var(--fg)}
header{padding:10px 16px;background:#1f2937;color:#f9fafb;display:flex;flex-wrap:wrap;gap:6px 18px;align-items:baseline}
header h1{font-size:16px;margin:0 12px 0 0}
header .fact .k{color:#9ca3af;margin-right:3px}
header .fact.bad{color:#fca5a5;font-weight:600}
.toolbar{position:sticky;top:0;z-index:5;background:var(--bg);border-bottom:1px solid var(--line);padding:8px 16px;display:flex;gap:10px;align-items:center;flex-wrap:wrap}
#search{width:380px;max-width:60vw;padding:6px 10px;border:1px solid #c9ccd3;border-radius:6px;font-size:14px}
button{padding:5px 10px;border:1px solid #c9ccd3;border-radius:6px;background:#fff;cursor:pointer;font-size:13px}
button:hover{background:#eef0f4}
#count{color:var(--muted);font-size:13px}
.legend .badge{margin-right:4px}
main{display:flex;align-items:flex-start}
nav{width:220px;flex:none;position:sticky;top:52px;max-height:calc(100vh - 60px);overflow:auto;padding:8px 0 8px 12px;font-size:13px}
nav ul{list-style:none;margin:0;padding:0}
nav li a{display:block;padding:2px 6px;border-radius:4px;color:var(--fg);text-decoration:none;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
nav li a:hover{background:#e9ebf0}
nav li.err a{color:var(--err);font-weight:600}
nav li.hidden{display:none}
.content{flex:1;min-width:0;padding:8px 16px 40px 8px}
details>summary{cursor:pointer;list-style:none}
details>summary::-webkit-details-marker{display:none}
.item{background:var(--card);border:1px solid var(--line);border-radius:8px;margin:8px 0}
.item.err{border-color:#f1b0b0}
.item-head{display:flex;gap:8px;align-items:center;padding:8px 12px;font-weight:600}
.item-head::before,.nd>summary::before{content:"▸";color:var(--muted);display:inline-block;width:12px;transition:transform .1s}
.item[open]>.item-head::before,.nd[open]>summary::before{transform:rotate(90deg)}
.item-stats{font-weight:400;color:var(--muted);font-size:13px}
.item-body{padding:0 12px 10px 12px}
.tag{font-weight:400;font-size:12px;background:#eef2ff;color:#3730a3;border-radius:10px;padding:0 7px}
.ok{color:#16a34a}
.mark{color:var(--err);font-weight:700}
.metrics{display:flex;flex-wrap:wrap;gap:4px 12px;font-size:12px;color:var(--muted);margin:2px 0 8px 0}
.metrics .k{color:#374151}
.spacer{flex:1}
.node{margin-left:14px;border-left:1px solid var(--line)}
.tree>.node{margin-left:0;border-left:none}
.row{display:flex;align-items:center;gap:8px;padding:2px 6px;border-radius:4px;min-height:24px}
.row:hover{background:#f1f3f7}
.node.err>.nd>.row{background:var(--errbg)}
.node.hit>.nd>.row{background:var(--hit)}
.name{font-weight:600;white-space:nowrap;overflow:hidden;text-overflow:ellipsis;max-width:360px;flex:0 0 auto}
.node.err>.nd>.row .name{color:var(--err)}
.err-brief{color:var(--err);font-size:12px;white-space:nowrap;overflow:hidden;text-overflow:ellipsis;flex:1 1 0;min-width:0}
.err-brief+.spacer{display:none}
.badge{font-size:11px;border-radius:4px;padding:0 5px;color:#fff;background:#6b7280;text-transform:uppercase;letter-spacing:.03em}
.badge.rt-chain{background:var(--chain)}.badge.rt-llm,.badge.rt-chat_model{background:var(--llm)}
.badge.rt-tool{background:var(--tool)}.badge.rt-retriever{background:var(--retriever)}
.lat{width:72px;text-align:right;font-variant-numeric:tabular-nums;color:#374151;font-size:12px}
.tok{width:92px;text-align:right;font-variant-numeric:tabular-nums;color:var(--muted);font-size:12px}
.lat,.tok,.tl,.tb{flex:none}
.tl{width:200px;height:10px;background:#eceef2;border-radius:3px;flex:none;overflow:hidden}
.tl-bar{display:block;height:100%;background:var(--chain);border-radius:3px;min-width:2px}
.rt-llm>.nd>.row .tl-bar,.rt-chat_model>.nd>.row .tl-bar{background:var(--llm)}
.rt-tool>.nd>.row .tl-bar{background:var(--tool)}
.node.err>.nd>.row .tl-bar{background:var(--err)}
.tb{width:80px;height:10px;background:#eceef2;border-radius:3px;flex:none;overflow:hidden}
.tb-bar{display:block;height:100%;background:#f59e0b}
.body{padding:2px 0 4px 18px}
.ios{display:flex;flex-wrap:wrap;gap:4px 10px;margin:2px 0}
.ios>.io{flex:0 0 auto}
.ios>.io[open]{flex:1 1 100%}
.io>summary{display:inline-block;font-size:12px;color:#2563eb;padding:1px 6px;border:1px solid #d5dcf5;border-radius:4px;background:#f5f7ff}
.io[open]>summary{background:#e0e7ff}
.io.hit-io>summary{background:var(--hit)}
pre{margin:4px 0;white-space:pre-wrap;word-break:break-word;font:12px/1.45 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
pre.json{background:#fbfbfc;border:1px solid var(--line);border-radius:6px;padding:6px 8px;max-height:480px;overflow:auto}
pre.json .k{color:#1d4ed8}
pre.error{background:var(--errbg);color:var(--err);border:1px solid #f1b0b0;border-radius:6px;padding:6px 8px;max-height:260px;overflow:auto}
.messages{margin:4px 0}
.msg{border:1px solid var(--line);border-left:4px solid #9ca3af;border-radius:6px;margin:4px 0;background:#fff}
.msg .role{font-size:11px;text-transform:uppercase;letter-spacing:.05em;color:var(--muted);padding:2px 8px;border-bottom:1px solid var(--line)}
.msg .msg-text{padding:4px 8px;max-height:420px;overflow:auto}
.msg.system{border-left-color:#6b7280}.msg.human{border-left-color:#2563eb}.msg.ai{border-left-color:var(--llm)}.msg.tool{border-left-color:var(--tool)}
.msg-extra{padding:0 8px 4px 8px;font-size:12px}
.raw>summary{font-size:12px;color:var(--muted)}
.errbox{display:flow-root;margin:2px 0 4px 0}
.errbox>.tb{display:block;margin:0 0 4px 0}
.hidden{display:none!important}
.none{color:var(--muted)}
"""

_JS = r"""
(function(){
  var search=document.getElementById('search'), errorsOnly=document.getElementById('errorsOnly');
  var countEl=document.getElementById('count');
  var cache=new WeakMap();
  function own(n,sel){var d=n.firstElementChild;return d?d.querySelectorAll(':scope > .body > '+sel):[];}
  function text(n){
    var t=cache.get(n); if(t!==undefined) return t;
    t=n.dataset.key||''; var ios=own(n,'.ios > .io'), err=own(n,'.errbox');
    for(var i=0;i<ios.length;i++) t+=' '+ios[i].textContent.toLowerCase();
    for(var j=0;j<err.length;j++) t+=' '+err[j].textContent.toLowerCase();
    cache.set(n,t); return t;
  }
  var stats={shown:0,total:0};
  function filterNode(n,q,eo){
    var kids=own(n,'.children > .node'), childHit=false;
    for(var i=0;i<kids.length;i++){ if(filterNode(kids[i],q,eo)) childHit=true; }
    var active=!!q||eo;
    var self=(!q||text(n).indexOf(q)>=0)&&(!eo||n.classList.contains('err'));
    var vis=!active||self||childHit;
    stats.total++; if(active&&self) stats.shown++;
    n.classList.toggle('hidden',!vis);
    n.classList.toggle('hit',!!q&&self);
    var ios=own(n,'.ios > .io'), byName=!!q&&(n.dataset.key||'').indexOf(q)>=0;
    for(var k=0;k<ios.length;k++){
      var inIo=!!q&&self&&ios[k].textContent.toLowerCase().indexOf(q)>=0;
      ios[k].classList.toggle('hit-io',inIo); if(inIo&&!byName) ios[k].open=true;
    }
    if(active&&(childHit||self)) n.firstElementChild.open=true;
    return vis;
  }
  function apply(){
    var q=search.value.trim().toLowerCase(), eo=errorsOnly.checked;
    stats={shown:0,total:0};
    var items=document.querySelectorAll('.item'), shownItems=0;
    items.forEach(function(it){
      var root=it.querySelector('.tree > .node');
      var vis=root?filterNode(root,q,eo):false;
      var keyHit=!!q&&(it.dataset.key||'').indexOf(q)>=0&&(!eo||it.classList.contains('err'));
      if(keyHit&&root&&!vis){ root.classList.remove('hidden'); vis=true; }
      if(!q&&!eo) vis=true;
      if(!root&&eo) vis=it.classList.contains('err');
      it.classList.toggle('hidden',!vis);
      var link=document.querySelector('nav a[data-item="'+it.id+'"]');
      if(link) link.parentElement.classList.toggle('hidden',!vis);
      if(vis) shownItems++;
      if((q||eo)&&vis) it.open=true;
    });
    countEl.textContent=(q||eo)?(stats.shown+' of '+stats.total+' nodes match, in '+shownItems+' item(s)'):(stats.total+' nodes');
  }
  var timer=null;
  search.addEventListener('input',function(){clearTimeout(timer);timer=setTimeout(apply,120);});
  errorsOnly.addEventListener('change',apply);
  document.getElementById('expand').addEventListener('click',function(){
    document.querySelectorAll('details.item, details.nd').forEach(function(d){if(!d.closest('.hidden'))d.open=true;});});
  document.getElementById('collapse').addEventListener('click',function(){
    document.querySelectorAll('details.nd, details.io').forEach(function(d){d.open=false;});});
  function openHash(){var id=location.hash.slice(1); var el=id&&document.getElementById(id); if(el&&el.tagName==='DETAILS') el.open=true;}
  var params=new URLSearchParams(location.search);
  if(params.get('q')) search.value=params.get('q');
  if(params.get('errors')==='1') errorsOnly.checked=true;
  window.addEventListener('hashchange',openHash); openHash(); apply();
})();
"""

_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">{csp}<meta name="viewport" content="width=device-width,initial-scale=1">
<title>{title}</title><style>{css}</style></head>
<body>
<header><h1>evidex trace viewer</h1>{header}</header>
<div class="toolbar">
<input id="search" type="search" placeholder="Search nodes: name, type, inputs, outputs, errors…" aria-label="Search nodes">
<label><input type="checkbox" id="errorsOnly"> errors only</label>
<button id="expand" type="button">Expand all</button><button id="collapse" type="button">Collapse all</button>
<span class="legend">{legend}</span><span id="count"></span>
</div>
<main><nav aria-label="items"><ul>{nav}</ul></nav>
<section class="content" data-items="{n_items}">{body}</section></main>
<script>{js}</script>
</body></html>
"""
