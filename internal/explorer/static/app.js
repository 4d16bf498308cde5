// localtable explorer: the few behaviours a page needs beyond forms.
"use strict";
document.addEventListener("DOMContentLoaded", () => {
  // The entity editor: add and remove property rows.
  const props = document.querySelector("#props tbody");
  const tmpl = document.getElementById("prop-template");
  const add = document.getElementById("add-prop");
  if (props && tmpl && add) {
    add.addEventListener("click", () => {
      const row = tmpl.content.firstElementChild.cloneNode(true);
      props.appendChild(row);
      row.querySelector(".pname").focus();
    });
    props.addEventListener("click", (ev) => {
      const btn = ev.target.closest(".remove-prop");
      if (btn) btn.closest("tr").remove();
    });
  }
  // The column chooser: the checked columns become $select whenever the
  // query is submitted (Query or Show these columns). While every column
  // shows (no $select), all of them checked stays no $select.
  const apply = document.getElementById("apply-columns");
  const all = document.getElementById("all-columns");
  const sel = document.getElementById("select");
  const form = document.getElementById("query");
  if (form && sel) {
    form.addEventListener("submit", () => {
      const boxes = [...document.querySelectorAll(".col-choice")];
      if (boxes.length === 0) return;
      const chosen = boxes.filter((c) => c.checked).map((c) => c.value);
      sel.value = sel.value === "" && chosen.length === boxes.length ? "" : chosen.join(",");
    });
  }
  if (apply && form) apply.addEventListener("click", () => form.requestSubmit());
  if (all && form) {
    all.addEventListener("click", (ev) => {
      ev.preventDefault();
      for (const c of document.querySelectorAll(".col-choice")) c.checked = true;
      sel.value = "";
      form.requestSubmit();
    });
  }
  // The Changes view.
  const view = document.getElementById("changes-view");
  if (view) watchChanges(view);
});

// watchChanges streams a table's changes into the Changes view, newest on
// top. It remembers the last revision shown and, when the stream breaks
// (the network, the server restarting) or after Pause, resumes from it,
// so nothing is missed or shown twice; the page's URL carries it too, so
// a reload resumes. A feed that no longer keeps the changes after it is
// said so, with a button to watch from now.
function watchChanges(view) {
  const tbody = document.querySelector("#changes tbody");
  const status = document.getElementById("changes-status");
  const pause = document.getElementById("changes-pause");
  const now = document.getElementById("changes-now");
  const maxRows = 1000;
  let last = Number(view.dataset.from);
  let controller = null;
  let paused = false;
  let failures = 0;
  let timer = 0;
  let gen = 0; // the connection's number: a stale one's events are ignored

  const say = (state, text) => {
    status.dataset.state = state;
    status.textContent = text;
  };
  const remember = () => {
    const u = new URL(location.href);
    u.searchParams.set("from", String(last));
    history.replaceState(null, "", u);
  };
  const retry = (my) => {
    if (paused || my !== gen) return;
    failures++;
    const wait = Math.min(250 * 2 ** failures, 5000);
    say("reconnecting", "Disconnected: reconnecting from revision " + last + "…");
    timer = setTimeout(connect, wait);
  };
  const stop = () => {
    gen++;
    clearTimeout(timer);
    if (controller) controller.abort();
    controller = null;
  };
  const failed = (err) => {
    stop();
    if (err.code === "FeedCompacted") {
      say("compacted", err.message + " Reload the entities to see the current data, or watch from now.");
      now.hidden = false;
      pause.hidden = true;
    } else if (err.code === "FeedOff") {
      say("off", err.message);
      pause.hidden = true;
    } else {
      say("error", err.message);
    }
  };

  async function connect() {
    stop();
    const my = gen;
    controller = new AbortController();
    say("connecting", "Connecting…");
    let resp;
    try {
      resp = await fetch(view.dataset.stream + "?from=" + last, {
        signal: controller.signal, headers: { Accept: "application/x-ndjson" }, cache: "no-store",
      });
    } catch (e) {
      return retry(my);
    }
    const type = resp.headers.get("Content-Type") || "";
    if (!resp.ok || !type.startsWith("application/x-ndjson")) {
      if (type.startsWith("application/json")) {
        const body = await resp.json().catch(() => null);
        if (body && body.error) return failed(body.error);
      }
      if (resp.ok) return failed({ code: "Session", message: "The session has ended: reload the page and log in again." });
      return retry(my);
    }
    failures = 0;
    say("live", "Live: showing the changes after revision " + last + " as they are committed.");
    const reader = resp.body.getReader();
    const dec = new TextDecoder();
    let buf = "";
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done || my !== gen) break;
        buf += dec.decode(value, { stream: true });
        let i;
        while ((i = buf.indexOf("\n")) >= 0) {
          const line = buf.slice(0, i);
          buf = buf.slice(i + 1);
          if (!line) continue;
          const msg = JSON.parse(line);
          if (msg.error) return failed(msg.error);
          if (msg.revision <= last) continue; // never twice
          show(msg);
          last = msg.revision;
        }
        remember();
      }
    } catch (e) {
      // aborted, or the connection broke: retry says which
    }
    retry(my);
  }

  function cell(tr, text, cls) {
    const td = document.createElement("td");
    td.textContent = text;
    if (cls) td.className = cls;
    tr.appendChild(td);
    return td;
  }

  function show(c) {
    const waiting = tbody.querySelector(".waiting");
    if (waiting) waiting.remove();
    const e = c.entity || {};
    const tr = document.createElement("tr");
    tr.className = "change";
    tr.dataset.revision = String(c.revision);
    tr.dataset.kind = c.kind;
    cell(tr, String(c.revision), "num");
    cell(tr, c.kind, "kind kind-" + c.kind);
    cell(tr, e.PartitionKey ?? "", "pk");
    cell(tr, e.RowKey ?? "", "rk");
    cell(tr, e.Timestamp ?? "", "ts");
    const props = cell(tr, "", "cprops");
    for (const name of Object.keys(e)) {
      if (name === "PartitionKey" || name === "RowKey" || name === "Timestamp" || name.startsWith("odata.") || name.endsWith("@odata.type")) continue;
      const span = document.createElement("span");
      span.className = "cprop";
      const type = e[name + "@odata.type"] || (typeof e[name] === "boolean" ? "Edm.Boolean" : "Edm.String");
      span.title = type;
      span.dataset.name = name;
      const b = document.createElement("b");
      b.textContent = name;
      const v = e[name];
      span.append(b, type === "Edm.Double" && Number.isInteger(v) ? v.toFixed(1) : String(v));
      props.appendChild(span);
    }
    tbody.prepend(tr);
    while (tbody.rows.length > maxRows) tbody.lastElementChild.remove();
  }

  pause.addEventListener("click", () => {
    if (paused) {
      paused = false;
      pause.textContent = "Pause";
      connect();
      return;
    }
    paused = true;
    stop();
    pause.textContent = "Resume";
    say("paused", "Paused after revision " + last + ": Resume shows the changes since.");
  });
  now.addEventListener("click", () => {
    // The current revision is the changes page's own: read it afresh.
    const u = new URL(location.href);
    u.searchParams.delete("from");
    location.assign(u);
  });
  connect();
}
