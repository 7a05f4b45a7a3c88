//! `cordon audit summary` (per day, in the terminal) and `cordon audit report --html FILE`
//! (one self-contained page: no network, the data inline, filters in inline script).
//!
//! Everything a record holds came, one way or another, from the agent: the page puts it in
//! the document only as text (`textContent`, and JSON whose `<` is escaped), never as markup.

use std::collections::BTreeMap;
use std::path::Path;

use cordon_approval::audit::{self, By, Kind, Record};
use cordon_policy::Action;

use super::Filter;
use crate::term::clean;
use crate::{Error, Exit};

/// The log's valid records, in file order (malformed lines are `verify`'s business).
fn records(file: &Path) -> Result<Vec<Record>, Error> {
    let bytes = std::fs::read(file)
        .map_err(|e| Error::failure(format!("audit log {}: cannot read: {e}", file.display())))?;
    Ok(bytes
        .split(|&b| b == b'\n')
        .filter_map(|l| serde_json::from_slice::<Record>(l).ok())
        .collect())
}

/// What a record is, for logs written before `kind` existed too.
fn kind_of(r: &Record) -> Kind {
    match (&r.kind, &r.by) {
        (Kind::Decision, By::Connection) => Kind::Connection,
        (Kind::Decision, By::AfterRun) => Kind::AfterRun,
        (k, _) => *k,
    }
}

#[derive(Default)]
struct Day {
    calls: u64,
    allows: u64,
    asks: u64,
    denials: u64,
    denied: BTreeMap<String, u64>,
    /// host:port -> (allowed events, denied events, bytes)
    hosts: BTreeMap<String, (u64, u64, u64)>,
    findings: u64,
    refusals: u64,
    repairs: u64,
}

/// The summary of the records of every log in `files`, together.
pub(super) fn summary(files: &[&Path], filter: &Filter) -> Exit {
    let mut all = Vec::new();
    for file in files {
        all.extend(records(file)?);
    }
    let mut days: BTreeMap<String, Day> = BTreeMap::new();
    // Calls counted from their decision, by (session, request id): a refusal of the same call
    // (it did not run after all: cordon could not run it, or the hook's deadline passed) turns
    // that call into a denial instead of counting a second call.
    let mut counted: std::collections::HashMap<(String, String), (String, Action, String)> =
        Default::default();
    for r in all.iter().filter(|r| filter.keeps(r)) {
        let day = days
            .entry(r.time.get(..10).unwrap_or("?").to_string())
            .or_default();
        if r.repair.is_some() {
            day.repairs += 1;
        }
        match kind_of(r) {
            Kind::Refusal
                if !r.request.is_empty()
                    && counted.contains_key(&(r.session.clone(), r.request.clone())) =>
            {
                let (date, was, shown) = counted[&(r.session.clone(), r.request.clone())].clone();
                let d = days.entry(date).or_default();
                match was {
                    Action::Allow => d.allows -= 1,
                    Action::Ask => d.asks -= 1,
                    Action::Deny => d.denials -= 1,
                }
                // Listed under the decision's preview, as its denials are.
                if was != Action::Deny {
                    *d.denied.entry(shown).or_default() += 1;
                }
                d.denials += 1;
                d.refusals += 1;
                counted.remove(&(r.session.clone(), r.request.clone()));
            }
            Kind::Decision | Kind::Refusal => {
                if kind_of(r) == Kind::Decision && !r.request.is_empty() {
                    counted.insert(
                        (r.session.clone(), r.request.clone()),
                        (
                            r.time.get(..10).unwrap_or("?").to_string(),
                            r.decision,
                            r.preview.clone(),
                        ),
                    );
                }
                day.calls += 1;
                match r.decision {
                    Action::Allow => day.allows += 1,
                    Action::Ask => day.asks += 1,
                    Action::Deny => {
                        day.denials += 1;
                        *day.denied.entry(r.preview.clone()).or_default() += 1;
                    }
                }
                if kind_of(r) == Kind::Refusal {
                    day.refusals += 1;
                }
            }
            Kind::Connection => {
                if let Some(c) = &r.connection {
                    let h = day
                        .hosts
                        .entry(format!("{}:{}", c.host, c.port))
                        .or_default();
                    if r.decision == Action::Allow {
                        if c.event == "open" {
                            h.0 += 1;
                        }
                    } else {
                        h.1 += 1;
                    }
                    if c.event == "close" {
                        h.2 += c.bytes_up + c.bytes_down;
                    }
                }
            }
            Kind::AfterRun => day.findings += r.keys.len() as u64,
            Kind::Repair => {}
        }
    }
    if days.is_empty() {
        println!("no records");
    }
    for (date, d) in &days {
        println!(
            "{date}: {} call(s): {} allowed, {} asked, {} denied ({} refused by cordon); {} \
             after-run finding(s); {} repair(s)",
            d.calls, d.allows, d.asks, d.denials, d.refusals, d.findings, d.repairs
        );
        let mut top: Vec<(&String, &u64)> = d.denied.iter().collect();
        top.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        for (cmd, n) in top.into_iter().take(5) {
            println!("  denied {n}x: {}", clean(cmd));
        }
        for (host, (ok, no, bytes)) in &d.hosts {
            println!(
                "  host {}: {ok} connection(s) allowed, {no} denied, {bytes} bytes",
                clean(host)
            );
        }
    }
    Ok(0)
}

/// JSON safe inside a `<script>` element: no `<` at all (`</script>` cannot end it early).
fn script_json(v: &serde_json::Value) -> String {
    v.to_string().replace('<', "\\u003c")
}

fn html_text(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

pub(super) fn html(file: &Path, out: &Path) -> Exit {
    let report = audit::verify(file).map_err(|e| Error::failure(format!("audit log {e}")))?;
    let recs = records(file)?;
    let status = if report.is_intact() {
        format!(
            "intact: {} record(s), the hash chain and head check out",
            report.records
        )
    } else if !report.tampered() {
        "complete records intact; torn tail (an interrupted write)".to_string()
    } else {
        format!("NOT INTACT: {} problem(s) found", report.problems.len())
    };
    let mut problems = String::new();
    for p in &report.problems {
        problems.push_str(&format!("<li>{}</li>", html_text(&p.to_string())));
    }
    for n in &report.notes {
        problems.push_str(&format!("<li class=note>note: {}</li>", html_text(n)));
    }
    // What a record says of the call is shown escaped, as on the terminal: the browser would
    // reorder a line at a bidirectional override, hide a zero-width character and draw a
    // lookalike letter as the letter it imitates (`textContent` only keeps it from being markup).
    let data: Vec<serde_json::Value> = recs
        .iter()
        .map(|r| {
            serde_json::json!({
                "time": r.time, "seq": r.seq, "session": clean(&r.session),
                "kind": kind_of(r).as_str(), "tool": clean(&r.tool),
                "decision": r.decision.as_str(), "deferred_to": r.deferred_to.as_deref().map(clean),
                "by": clean(&r.by.to_string()), "preview": clean(&r.preview),
                "reason": clean(&r.reason), "repair": r.repair.as_deref().map(clean),
            })
        })
        .collect();
    let page = PAGE
        .replace("{{FILE}}", &html_text(&file.display().to_string()))
        .replace(
            "{{STATUS_CLASS}}",
            if report.is_intact() { "ok" } else { "bad" },
        )
        .replace("{{STATUS}}", &html_text(&status))
        .replace("{{PROBLEMS}}", &problems)
        .replace("{{THREAT}}", &html_text(audit::THREAT_MODEL))
        .replace("{{DATA}}", &script_json(&serde_json::Value::Array(data)));
    // The operator named the file, but it may lie in a writable root where a command planted
    // a link at its name: written through cordon_fs::safe (atomically, never through a link
    // at the name; the directory is the operator's), private like the log it shows.
    let (dir, name) = match (out.parent(), out.file_name()) {
        (Some(d), Some(n)) if !d.as_os_str().is_empty() => (d, n),
        (_, Some(n)) => (Path::new("."), n),
        _ => {
            return Err(Error::failure(format!(
                "{}: not a file name",
                out.display()
            )))
        }
    };
    cordon_fs::safe::write(dir, Path::new(name), page.as_bytes(), 0o600)
        .map_err(|e| Error::failure(format!("cannot write the report: {e}")))?;
    println!(
        "{}: {} record(s); chain: {status}",
        out.display(),
        recs.len()
    );
    Ok(0)
}

/// The page. Filters: decision, kind, tool, free text; set from the address's fragment too
/// (`report.html#decision=deny&tool=shell`), so a link can point at a view.
const PAGE: &str = r##"<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'">
<title>cordon audit report</title>
<style>
body{font:14px system-ui,sans-serif;margin:1.5em;color:#222}
.ok{color:#060}.bad{color:#a00;font-weight:bold}.note{color:#555}
table{border-collapse:collapse;width:100%}td,th{padding:2px 6px;border-bottom:1px solid #ddd;text-align:left;vertical-align:top}
tr.deny td.d{color:#a00}tr.allow td.d{color:#060}tr.ask td.d{color:#a60}
tr.day td{background:#eef;font-weight:bold}
.bar{display:inline-block;height:10px;background:#88a;margin-left:6px}
#filters{margin:1em 0}#filters *{margin-right:.6em}
</style></head><body>
<h1>cordon audit report</h1>
<p>Log: <code>{{FILE}}</code></p>
<p>Chain: <span id="status" class="{{STATUS_CLASS}}">{{STATUS}}</span></p>
<ul id="problems">{{PROBLEMS}}</ul>
<p class="note">{{THREAT}}</p>
<div id="filters">
<label>decision <select id="f-decision"><option value="">any</option><option>allow</option><option>ask</option><option>deny</option></select></label>
<label>kind <select id="f-kind"><option value="">any</option><option>decision</option><option>connection</option><option>after-run</option><option>refusal</option><option>repair</option></select></label>
<label>tool <input id="f-tool" size="10"></label>
<label>text <input id="f-text" size="20"></label>
<span><span id="shown">0</span> of <span id="total">0</span> shown</span>
</div>
<table><thead><tr><th>time</th><th>#</th><th>kind</th><th>decision</th><th>tool</th><th>call</th><th>by</th><th>reason</th></tr></thead>
<tbody id="rows"></tbody></table>
<script id="data" type="application/json">{{DATA}}</script>
<script>
"use strict";
const recs = JSON.parse(document.getElementById("data").textContent);
const $ = id => document.getElementById(id);
function cell(tr, text, cls) { const td = document.createElement("td"); td.textContent = text; if (cls) td.className = cls; tr.appendChild(td); }
function fromHash() {
  const p = new URLSearchParams(location.hash.slice(1));
  for (const k of ["decision", "kind", "tool", "text"]) if (p.has(k)) $("f-" + k).value = p.get(k);
}
function render() {
  const f = { decision: $("f-decision").value, kind: $("f-kind").value, tool: $("f-tool").value.trim(), text: $("f-text").value.trim().toLowerCase() };
  const body = $("rows"); body.textContent = "";
  const shown = recs.filter(r => (!f.decision || r.decision === f.decision) && (!f.kind || r.kind === f.kind)
    && (!f.tool || r.tool === f.tool)
    && (!f.text || [r.preview, r.reason, r.by, r.repair || ""].some(s => s.toLowerCase().includes(f.text))));
  const perDay = {};
  for (const r of shown) perDay[r.time.slice(0, 10)] = (perDay[r.time.slice(0, 10)] || 0) + 1;
  const most = Math.max(1, ...Object.values(perDay));
  let day = null;
  for (const r of shown) {
    const d = r.time.slice(0, 10);
    if (d !== day) {
      day = d;
      const tr = document.createElement("tr"); tr.className = "day";
      const td = document.createElement("td"); td.colSpan = 8; td.textContent = d + ": " + perDay[d] + " record(s)";
      const bar = document.createElement("span"); bar.className = "bar"; bar.style.width = (200 * perDay[d] / most) + "px";
      td.appendChild(bar); tr.appendChild(td); body.appendChild(tr);
    }
    const tr = document.createElement("tr"); tr.className = "rec " + r.decision;
    cell(tr, r.time.slice(11, 23)); cell(tr, String(r.seq)); cell(tr, r.kind);
    cell(tr, r.deferred_to ? "ask (deferred to " + r.deferred_to + ")" : r.decision, "d");
    cell(tr, r.tool); cell(tr, r.preview); cell(tr, r.by); cell(tr, r.reason + (r.repair ? " [repair: " + r.repair + "]" : ""));
    body.appendChild(tr);
  }
  $("shown").textContent = String(shown.length); $("total").textContent = String(recs.length);
}
for (const id of ["f-decision", "f-kind", "f-tool", "f-text"]) { $(id).addEventListener("input", render); $(id).addEventListener("change", render); }
window.addEventListener("hashchange", () => { fromHash(); render(); });
fromHash(); render();
</script></body></html>
"##;
