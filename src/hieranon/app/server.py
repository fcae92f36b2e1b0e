"""The workbench's web application (FastAPI, pages rendered with Jinja2).

Every request needs the session's token: in the address the app prints
(``?token=...``, which also sets a same-site cookie for the pages that
follow), in that cookie, or in the header ``X-Hieranon-Token``; any other
request is refused (403), as is a ``Host`` other than the loopback one (a
page elsewhere cannot reach the app by rebinding a name to 127.0.0.1).
Uploads are refused over the size limit before they are read (413).
"""

from __future__ import annotations

import contextlib
import hmac
import itertools
import logging
import secrets
import tempfile
import time
from pathlib import Path
from urllib.parse import quote

from fastapi import FastAPI, Request
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, PlainTextResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from starlette.datastructures import UploadFile

from ..algorithms.registry import DEFAULT_METHOD, available_methods
from .jobs import Job
from .runs import CONFIG_NAME, Run, grid_points, grid_work, start_run
from .workbench import BUILDERS, RISK_FORM_KEYS, ROLE_CHOICES, AppError, Workbench, methods

log = logging.getLogger("hieranon.app")

__all__ = ["create_app", "MAX_UPLOAD_BYTES", "TOKEN_COOKIE"]

#: Largest upload accepted (a table, a configuration, a hierarchy file).
MAX_UPLOAD_BYTES = 200 * 2**20
TOKEN_COOKIE = "hieranon_token"
TOKEN_HEADER = "x-hieranon-token"
HERE = Path(__file__).parent
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "testserver")


def _megabytes(n: int) -> str:
    return f"{n / 2**20:.0f} MB" if n >= 2**20 else f"{n / 1024:.0f} kB" if n >= 1024 else f"{n} bytes"


class State:
    """The application's one session: the workbench, its runs and jobs, its temporary folder."""

    def __init__(self, token: str, workdir: Path, max_upload: int):
        self.token, self.workdir, self.max_upload = token, workdir, max_upload
        self.wb = Workbench(workdir)
        self.runs: dict[str, Run] = {}
        self.jobs: dict[str, Job] = {}
        self.grids: dict[str, dict] = {}
        self.ids = itertools.count(1)

    def new_id(self, prefix: str) -> str:
        return f"{prefix}{next(self.ids)}"


def create_app(table: Path | None = None, config: Path | None = None, *, token: str | None = None,
               workdir: Path | None = None, max_upload: int = MAX_UPLOAD_BYTES) -> FastAPI:
    """The workbench as an ASGI application, with ``table`` and ``config``
    loaded when given (a bad one: :class:`AppError`). ``workdir``: the
    session's temporary folder (default: a new one, removed on shutdown)."""
    owned = None
    if workdir is None:
        owned = tempfile.TemporaryDirectory(prefix="hieranon-app-")
        workdir = Path(owned.name)
    state = State(token or secrets.token_urlsafe(24), Path(workdir), max_upload)
    if config is not None:
        state.wb.load_config(Path(config))
    if table is not None:
        state.wb.load_table(Path(table))

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI):
        yield
        for job in list(state.jobs.values()):  # the server stops: no run outlives it, no file stays
            if job.state == "running":
                job.cancel(wait=2.0)
        if owned is not None:
            owned.cleanup()

    app = FastAPI(title="hieranon workbench", docs_url=None, redoc_url=None, openapi_url=None, lifespan=lifespan)
    app.state.hieranon = state
    templates = Jinja2Templates(directory=str(HERE / "templates"))
    templates.env.globals.update(ROLE_CHOICES=ROLE_CHOICES, BUILDERS=BUILDERS)
    app.mount("/static", StaticFiles(directory=str(HERE / "static")), name="static")

    @app.middleware("http")
    async def guard(request: Request, call_next):
        host = (request.headers.get("host") or "").rsplit(":", 1)[0].strip("[]")
        if host not in LOOPBACK_HOSTS:
            return PlainTextResponse(f"refused: the workbench answers only at 127.0.0.1, not at {host!r}",
                                     status_code=403)
        given = request.query_params.get("token")
        presented = given or request.headers.get(TOKEN_HEADER) or request.cookies.get(TOKEN_COOKIE) or ""
        if not hmac.compare_digest(presented.encode(), state.token.encode()):
            return PlainTextResponse("forbidden: open the address `hieranon app` printed (it holds the session's "
                                     "token)", status_code=403)
        length = request.headers.get("content-length")
        if request.method == "POST" and "multipart/form-data" in request.headers.get("content-type", ""):
            if length is None:
                return PlainTextResponse("an upload must say its size (Content-Length)", status_code=411)
            if int(length) > state.max_upload:
                return _page_error(request, templates, state, "load",
                                   f"the upload is {_megabytes(int(length))}, over the limit of "
                                   f"{_megabytes(state.max_upload)}: give the file's path on this computer instead",
                                   status=413)
        response = await call_next(request)
        if given:
            response.set_cookie(TOKEN_COOKIE, state.token, httponly=True, samesite="strict")
        return response

    # ------------------------------------------------------------------ pages
    @app.get("/", response_class=HTMLResponse)
    def index(request: Request):
        return _page(request, templates, state)

    @app.post("/table")
    async def table(request: Request):
        form = await request.form()
        try:
            path, uploaded = await _chosen_file(state, form, "table", "give the path of a table or choose a file "
                                                                       "to upload")
            state.wb.load_table(path, *([uploaded] if uploaded else []))
        except AppError as exc:
            return _page_error(request, templates, state, "load", str(exc))
        return _next(request, "roles")

    @app.post("/config")
    async def config_form(request: Request):
        form = await request.form()
        try:
            path, uploaded = await _chosen_file(state, form, "config", "give the path of a YAML configuration or "
                                                                        "choose a file to upload")
            if uploaded:
                state.wb.load_config(path, uploaded, base=state.workdir)
            else:
                state.wb.load_config(path)
        except AppError as exc:
            return _page_error(request, templates, state, "load", str(exc))
        return _next(request, "roles")

    @app.post("/roles")
    async def roles(request: Request):
        form = await request.form()
        try:
            state.wb.set_roles({c: str(form.get(f"role-{c}", "")) for c in state.wb.columns()})
        except AppError as exc:
            return _page_error(request, templates, state, "roles", str(exc))
        return _next(request, "hierarchies")

    @app.post("/hierarchy")
    async def hierarchy(request: Request):
        form = await request.form()
        column = str(form.get("column", ""))
        try:
            upload = form.get("upload")
            if isinstance(upload, UploadFile) and upload.filename:
                data = await _read_upload(state, upload)
                try:
                    text = data.decode("utf-8-sig")
                except UnicodeDecodeError:
                    raise AppError(f"hierarchy file {upload.filename} is not UTF-8 text") from None
                state.wb.upload_hierarchy(column, text, Path(upload.filename).name)
            else:
                entry = state.wb.builder_entry(column, str(form.get("builder", "")), str(form.get("argument", "")),
                                               str(form.get("date_format", "")))
                state.wb.set_hierarchy(column, entry)
        except AppError as exc:
            return _page_error(request, templates, state, "hierarchies", str(exc), column=column)
        return _next(request, f"h-{column}")

    @app.post("/requirements")
    async def requirements(request: Request):
        form = await request.form()
        try:
            sensitive = state.wb.raw.get("sensitive") or []
            state.wb.set_requirements(
                k=_number(form.get("k"), "k", int), method=str(form.get("method") or "") or None,
                max_suppression=str(form.get("max_suppression") or "").strip() or None,
                risk_threshold=_number(form.get("risk_threshold"), "risk threshold", float),
                l_diversity={a: _number(form.get(f"l-{a}"), f"l-diversity of {a}", float) for a in sensitive},
                t_closeness={a: _number(form.get(f"t-{a}"), f"t-closeness of {a}", float) for a in sensitive},
                risk_models={key: _number(form.get(key), key.replace("_", " "), float) for key in RISK_FORM_KEYS},
                sampling_fraction=_number(form.get("sampling_fraction"), "sampling fraction", float))
        except AppError as exc:
            return _page_error(request, templates, state, "requirements", str(exc))
        return _next(request, "run")

    # ------------------------------------------------------------------- runs
    @app.post("/runs")
    async def start(request: Request):
        try:
            raw = state.wb.run_config()
        except AppError as exc:
            return _error(request, templates, state, "run", str(exc))
        run_id = state.new_id("r")
        rec, work = start_run(state.wb, run_id, state.workdir / run_id, raw)
        state.runs[run_id] = rec
        state.jobs[run_id] = Job(work, id=run_id).start()
        log.info("run %s started", run_id)
        if _wants_json(request):
            return JSONResponse({"id": run_id, "status": f"/runs/{run_id}/status"})
        return RedirectResponse(f"/runs/{run_id}", status_code=303)

    @app.get("/runs/{run_id}/status")
    def status(run_id: str):
        return JSONResponse(_job(state, run_id).as_dict())

    @app.post("/runs/{run_id}/cancel")
    def cancel(request: Request, run_id: str):
        stopped = _job(state, run_id).cancel()
        if _wants_json(request):
            return JSONResponse({**state.jobs[run_id].as_dict(), "stopped": stopped})
        return RedirectResponse(f"/runs/{run_id}", status_code=303)

    @app.get("/runs/{run_id}", response_class=HTMLResponse)
    def result(request: Request, run_id: str):
        job, rec = _job(state, run_id), state.runs.get(run_id)
        view = _result_view(rec) if job.state == "done" and rec is not None else None
        return templates.TemplateResponse(request, "run.html", {"job": job.as_dict(), "run": rec, "view": view,
                                                                "config_name": CONFIG_NAME})

    @app.get("/runs/{run_id}/report.html")
    def report(run_id: str):
        return FileResponse(_finished(state, run_id).report(), media_type="text/html")

    @app.get("/runs/{run_id}/release.csv")
    def release(run_id: str):
        rec = _finished(state, run_id)
        return FileResponse(rec.release(), media_type="text/csv", filename=rec.release_name)

    @app.get("/runs/{run_id}/report-download")
    def report_download(run_id: str):
        rec = _finished(state, run_id)
        return FileResponse(rec.report(), media_type="text/html", filename=f"{Path(rec.release_name).stem}-report.html")

    @app.get("/runs/{run_id}/config.yaml")
    def config_download(run_id: str):
        rec = _finished(state, run_id)
        return Response(rec.config_text(), media_type="application/x-yaml",
                        headers={"Content-Disposition": f'attachment; filename="{CONFIG_NAME}"'})

    @app.get("/runs/{run_id}/command.txt")
    def command(run_id: str):
        rec = _finished(state, run_id)
        return PlainTextResponse(_command(rec) + "\n", headers={"Content-Disposition":
                                                                 'attachment; filename="hieranon-command.txt"'})

    # -------------------------------------------------------------- the grid
    @app.post("/explore")
    async def explore(request: Request):
        form = await request.form()
        try:
            base = state.wb.run_config()
            ks = [int(x) for x in str(form.get("ks", "")).replace(" ", "").split(",") if x]
            if not ks or min(ks) < 2:
                raise AppError("k values: give whole numbers >= 2, e.g. 2,5,10")
            chosen = [m for m in (str(form.get("method1") or ""), str(form.get("method2") or "")) if m]
            chosen = list(dict.fromkeys(chosen)) or [base.get("method") or DEFAULT_METHOD]
            bad = [m for m in chosen if m not in available_methods()]
            if bad:
                raise AppError(f"method {bad[0]!r} is not one of {', '.join(available_methods())}")
            points = grid_points(ks, chosen, bool(base.get("privacy")) and form.get("without_model") is not None)
        except (AppError, ValueError) as exc:
            return _error(request, templates, state, "explore", str(exc).splitlines()[0])
        grid_id = state.new_id("g")

        def new_run(p: dict) -> Run:
            run_id = state.new_id("r")
            raw = state.wb.run_config(k=p["k"], method=p["method"])
            if not p["model"]:
                raw.pop("privacy", None)
            rec = Run(run_id, state.workdir / run_id, state.wb.table.name, state.wb.table.path, raw,
                      label=f"k={p['k']}, {p['method']}" + ("" if p["model"] else ", no privacy model"),
                      lower_bound=True)
            state.runs[run_id] = rec
            state.jobs[run_id] = Job(lambda progress: rec, id=run_id)  # its state set by finish(), in the grid's thread
            return rec

        def finish(rec: Run, error: str | None) -> None:
            job = state.jobs[rec.id]
            job.error = None if error in (None, "cancelled") else error
            job.state = "cancelled" if error == "cancelled" else "failed" if error else "done"
            job.finished_at = time.perf_counter()

        state.grids[grid_id] = {"points": points}
        state.jobs[grid_id] = Job(grid_work(state.wb, points, new_run, finish), id=grid_id).start()
        if _wants_json(request):
            return JSONResponse({"id": grid_id, "status": f"/runs/{grid_id}/status"})
        return RedirectResponse(f"/explore/{grid_id}", status_code=303)

    @app.get("/explore/{grid_id}", response_class=HTMLResponse)
    def explore_page(request: Request, grid_id: str):
        job = _job(state, grid_id)
        points = [_point_view(state, p) for p in state.grids.get(grid_id, {}).get("points", []) if "run" in p]
        return templates.TemplateResponse(request, "explore.html", {"job": job.as_dict(), "grid_id": grid_id,
                                                                    "points": points, "chart": _chart(points)})

    return app


# ---------------------------------------------------------------- helpers
async def _chosen_file(state: State, form, kind: str, missing: str) -> tuple[Path, str | None]:
    """The file a form names: an upload (saved in the session's folder; its
    name beside) or a path on this computer; :class:`AppError` ``missing``
    when it names neither."""
    upload = form.get("upload")
    if isinstance(upload, UploadFile) and upload.filename:
        return await _save_upload(state, upload, kind), Path(upload.filename).name
    text = str(form.get("path") or "").strip()
    if not text:
        raise AppError(missing)
    return Path(text).expanduser(), None


def _page(request: Request, templates, state: State, errors: dict | None = None, status: int = 200):
    wb = state.wb
    hints = {h.column: h for h in wb.hints()}
    qis = list(wb.raw.get("quasi_identifiers") or {})
    previews = {q: wb.preview(q) for q in qis} if wb.table is not None else {}
    preview_rows = wb.table.data.head(8) if wb.table is not None else None
    context = {"wb": wb, "hints": hints, "roles": wb.roles(), "qis": qis, "previews": previews,
               "preview": preview_rows, "methods": methods(), "default_method": DEFAULT_METHOD,
               "errors": errors or {}, "todo": wb.ready(), "max_upload": _megabytes(state.max_upload),
               "max_upload_bytes": state.max_upload,
               "runs": [r for r in state.runs.values() if state.jobs.get(r.id) is not None]}
    return templates.TemplateResponse(request, "index.html", context, status_code=status)


def _page_error(request: Request, templates, state: State, step: str, message: str, status: int = 400, **where):
    log.info("input refused at step %s", step)  # the message names values of the table: shown, never logged
    return _page(request, templates, state, {step: message, **{f"{step}-{k}": v for k, v in where.items()}},
                 status=status)


def _error(request: Request, templates, state: State, step: str, message: str):
    if _wants_json(request):
        return JSONResponse({"error": message}, status_code=400)
    return _page_error(request, templates, state, step, message)


def _wants_json(request: Request) -> bool:
    return "application/json" in request.headers.get("accept", "")


def _next(request: Request, anchor: str) -> RedirectResponse:
    return RedirectResponse(f"/#{quote(anchor)}", status_code=303)


def _number(value, what: str, kind):
    text = str(value or "").strip()
    if not text:
        return None
    try:
        return kind(text)
    except ValueError:
        raise AppError(f"{what}: expected {'a whole number' if kind is int else 'a number'}, got {text!r}") from None


async def _read_upload(state: State, upload: UploadFile) -> bytes:
    data = await upload.read(state.max_upload + 1)
    if len(data) > state.max_upload:
        raise AppError(f"{upload.filename} is over the upload limit of {_megabytes(state.max_upload)}: give the "
                       "file's path on this computer instead")
    return data


async def _save_upload(state: State, upload: UploadFile, what: str) -> Path:
    """An uploaded file kept in the session's folder under its own name."""
    data = await _read_upload(state, upload)
    name = Path(upload.filename or what).name or what
    folder = state.workdir / f"upload-{next(state.ids)}"
    folder.mkdir(parents=True)
    path = folder / name
    path.write_bytes(data)
    return path


def _job(state: State, job_id: str) -> Job:
    from fastapi import HTTPException
    if job_id not in state.jobs:
        raise HTTPException(404, f"no run {job_id!r} in this session")
    return state.jobs[job_id]


def _finished(state: State, run_id: str) -> Run:
    from fastapi import HTTPException
    job, rec = _job(state, run_id), state.runs.get(run_id)
    if job.state != "done" or rec is None or rec.result is None:
        raise HTTPException(409, f"run {run_id} has no result ({job.state})")
    return rec


def _command(rec: Run) -> str:
    import shlex
    return shlex.join(["hieranon", "anonymize", rec.table_name, "--config", CONFIG_NAME, "-o", rec.release_name])


def _result_view(rec: Run) -> dict:
    """What the result page shows: statement, risk before/after, utility, the main measures."""
    res = rec.result
    m = res.metrics
    before, after, _ = res.risk()
    statement = res.statement()
    measures = [("records", f"{m.n_records:,}"), ("k achieved (smallest class)", f"{m.achieved_k:,}"),
                ("equivalence classes", f"{m.n_classes:,}"), ("suppressed records", f"{int(m.suppressed_records):,}"),
                ("distortion ratio", f"{m.distortion_ratio:.4f}"), ("precision", f"{m.precision:.4f}"),
                ("discernibility", f"{m.discernibility:,.0f}")]
    risk = [(f"records at risk (risk above {before.threshold:.3g})", before.records_at_risk,
             after.records_at_risk if after is not None else "-"),
            ("highest prosecutor risk", f"{before.risk_max:.3f}", f"{after.risk_max:.3f}" if after else "-"),
            ("average prosecutor risk", f"{before.risk_mean:.3f}", f"{after.risk_mean:.3f}" if after else "-")]
    if before.models is not None and after is not None and after.models is not None:
        risk.append(("population uniques (Dankar et al. 2012)", f"{before.models.dankar:.4f}",
                     f"{after.models.dankar:.4f}"))
    utility = [(a.name, f"{a.kept:.1%}", f"{a.generalised:.1%}", f"{a.suppressed:.1%}", f"{a.entropy_loss:.3f}")
               for a in res.utility().attributes]
    return {"statement": statement.lines(), "measures": measures, "risk": risk, "utility": utility,
            "privacy": res.privacy().rows(), "command": _command(rec),
            "sample": res.data.head(10) if res.data is not None else None}


def _point_view(state: State, p: dict) -> dict:
    rec = state.runs.get(p["run"])
    res = rec.result if rec is not None else None
    view = {**p, "label": rec.label if rec else "", "ratio": None, "bound": None, "at_risk": None}
    if res is not None:
        view["ratio"] = float(res.metrics.distortion_ratio)
        lb = res.lower_bound
        view["bound"] = float(lb.ratio) if lb is not None else None
        _, after, _ = res.risk()
        view["at_risk"] = after.records_at_risk if after is not None else None
    return view


def _chart(points: list[dict]) -> dict:
    """An SVG line chart of distortion ratio against k, one series per
    (method, with/without model), the lower bound dashed where it was computed."""
    ok = [p for p in points if p["ratio"] is not None]
    if not ok:
        return {"series": [], "ticks": []}
    ks = sorted({p["k"] for p in ok})
    top = max(max(p["ratio"] for p in ok), max((p["bound"] or 0) for p in ok), 1e-9)
    w, h, left, bottom = 640, 320, 56, 40

    def x(k):
        return left + 24 + (w - left - 48) * (ks.index(k) / max(len(ks) - 1, 1))  # clear of the axis

    def y(v):
        return 20 + (h - bottom - 20) * (1 - v / top)

    series = []
    colours = ["#1f5fa8", "#b8520a", "#2f7d32", "#7b3fa0"]
    methods = list(dict.fromkeys(p["method"] for p in ok))
    for key in dict.fromkeys((p["method"], p["model"]) for p in ok):
        pts = sorted((p for p in ok if (p["method"], p["model"]) == key), key=lambda p: p["k"])
        series.append({"name": key[0] + ("" if key[1] else " (no privacy model)"), "hollow": not key[1],
                       "colour": colours[methods.index(key[0]) % len(colours)],
                       "points": [{"x": x(p["k"]), "y": y(p["ratio"]), "run": p["run"], "k": p["k"],
                                   "ratio": p["ratio"]} for p in pts]})
    bounds = []  # the highest bound certified at each k (every method's run certifies one), per model setting
    for model in dict.fromkeys(p["model"] for p in ok):
        best = {}
        for p in ok:
            if p["model"] == model and p["bound"] is not None:
                best[p["k"]] = max(best.get(p["k"], 0.0), p["bound"])
        if best:
            bounds.append({"name": "lower bound" + ("" if model else " (no privacy model)"), "hollow": not model,
                           "points": [{"x": x(k), "y": y(v)} for k, v in sorted(best.items())]})
    ticks = [{"x": x(k), "k": k} for k in ks]
    yticks = [{"y": y(top * f), "v": f"{top * f:.2f}"} for f in (0, 0.25, 0.5, 0.75, 1)]
    return {"series": series, "bounds": bounds, "ticks": ticks, "yticks": yticks, "w": w, "h": h, "left": left,
            "bottom": bottom}
