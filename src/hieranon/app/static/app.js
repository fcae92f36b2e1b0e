// hieranon workbench: runs in the background with progress and Cancel; upload size checked before sending.
// Plain JavaScript, served by the app itself (nothing is fetched from elsewhere).
"use strict";

function poll(box, statusUrl, cancelUrl, onDone) {
  const bar = box.querySelector("progress");
  const stage = box.querySelector(".stage");
  const cancel = box.querySelector(".cancel");
  const error = box.querySelector(".job-error");
  if (cancel) {
    cancel.hidden = false;
    cancel.onclick = async () => {
      cancel.disabled = true;
      stage.textContent = "cancelling...";
      await fetch(cancelUrl, {method: "POST", headers: {"Accept": "application/json"}});
    };
  }
  const tick = async () => {
    let s;
    try {
      s = await (await fetch(statusUrl, {headers: {"Accept": "application/json"}})).json();
    } catch (e) {
      setTimeout(tick, 1000);
      return;
    }
    if (s.fraction === null) { bar.removeAttribute("value"); } else { bar.value = s.fraction; }
    const left = s.remaining ? ` (about ${Math.ceil(s.remaining)} s left)` : "";
    stage.textContent = `${s.stage}${s.detail ? ": " + s.detail : ""}${left}, ${s.elapsed} s`;
    if (s.state === "running") { setTimeout(tick, 400); return; }
    if (cancel) { cancel.hidden = true; }
    if (s.state === "done") { onDone(s); return; }
    stage.textContent = s.state === "cancelled" ? "Cancelled." : "Failed.";
    if (error && s.error) { error.textContent = s.error; error.hidden = false; }
    box.dispatchEvent(new Event("hieranon-finished"));
    if (box.dataset.reload) { location.reload(); }
  };
  tick();
}

document.addEventListener("DOMContentLoaded", () => {
  // uploads: refused here over the limit, with the same words the server would use
  for (const form of document.querySelectorAll("form[data-max-upload]")) {
    form.addEventListener("submit", (ev) => {
      const limit = Number(form.dataset.maxUpload);
      const message = form.querySelector(".upload-error");
      for (const input of form.querySelectorAll("input[type=file]")) {
        for (const f of input.files) {
          if (f.size > limit) {
            ev.preventDefault();
            message.textContent = `${f.name} is ${(f.size / 1048576).toFixed(0)} MB, over the limit of ` +
              `${(limit / 1048576).toFixed(0)} MB: give the file's path on this computer instead`;
            message.hidden = false;
            input.focus();
            return;
          }
        }
      }
    });
  }
  // a run or a grid: started in the background, progress polled, Cancel offered
  for (const form of document.querySelectorAll("form[data-job]")) {
    form.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      const submit = form.querySelector("button[type=submit]");
      const error = form.querySelector(".job-error");
      submit.disabled = true;
      error.hidden = true;
      const r = await fetch(form.action, {method: "POST", body: new FormData(form),
                                          headers: {"Accept": "application/json"}});
      const body = await r.json();
      if (!r.ok) { error.textContent = body.error; error.hidden = false; submit.disabled = false; return; }
      const box = form.querySelector(".progress");
      box.hidden = false;
      const page = form.dataset.job === "explore" ? `/explore/${body.id}` : `/runs/${body.id}`;
      const done = () => { location.href = page; };
      box.querySelector(".stage").focus();
      form.addEventListener("hieranon-finished", () => { submit.disabled = false; }, {once: true});
      poll(form, body.status, `/runs/${body.id}/cancel`, done);
    });
  }
  // the chosen method's one-line description beside the list
  const method = document.getElementById("method");
  if (method) {
    method.addEventListener("change", () => {
      document.getElementById("method-help").textContent = method.selectedOptions[0].dataset.line;
    });
  }
  // a page opened while its run goes on
  for (const box of document.querySelectorAll("[data-poll]")) {
    poll(box, box.dataset.poll, box.dataset.cancel, () => location.reload());
  }
});
