"""The docs: the Sphinx site builds without warnings, every Python example runs, the pictures exist.

CPU only. Every ``.. code-block:: python`` of a page runs in order in one namespace per page
(later blocks use earlier names), so the guide cannot drift from the library.
"""

from __future__ import annotations

import linecache
import os
import pathlib
import re
import struct
import subprocess
import sys
import tempfile
import textwrap

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PAGES = sorted(DOCS.rglob("*.rst"), key=lambda p: (p.name != "index.rst", str(p)))
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

_DIRECTIVE = re.compile(r"^(?P<indent>[ \t]*)\.\. (?:code-block|code|sourcecode)::[ \t]*python3?[ \t]*$")


def python_blocks(text: str) -> list[tuple[int, str]]:
    """``(line number, source)`` of every ``.. code-block:: python`` in ``text``, in order.

    The body is every following line indented deeper than the directive (blank lines included),
    after the directive's ``:option:`` lines; it is dedented.
    """
    lines = text.splitlines()
    blocks = []
    i = 0
    while i < len(lines):
        m = _DIRECTIVE.match(lines[i])
        if not m:
            i += 1
            continue
        indent = len(m.group("indent").expandtabs())
        j = i + 1
        # directive options: ":name: value" lines directly under the directive
        while j < len(lines) and lines[j].strip().startswith(":") and _indent(lines[j]) > indent:
            j += 1
        body = []
        while j < len(lines) and (not lines[j].strip() or _indent(lines[j]) > indent):
            body.append(lines[j])
            j += 1
        source = textwrap.dedent("\n".join(body)).strip("\n")
        if source.strip():
            blocks.append((i + 1, source + "\n"))
        i = j
    return blocks


def _indent(line: str) -> int:
    return len(line.expandtabs()) - len(line.expandtabs().lstrip())


def test_block_extraction_handles_options_and_indentation():
    text = textwrap.dedent(
        """\
        Title
        =====

        .. code-block:: python
           :caption: first
           :linenos:

           a = 1

           def f():
               return a + 1

        Some prose.

        * a list item

          .. code-block:: python

             b = f()

        .. code-block:: bash

           echo not python
        """
    )
    blocks = python_blocks(text)
    assert [src for _, src in blocks] == ["a = 1\n\ndef f():\n    return a + 1\n", "b = f()\n"]
    ns: dict = {}
    for _, src in blocks:
        exec(compile(src, "<test>", "exec"), ns)
    assert ns["b"] == 2


def test_every_page_has_examples_and_is_listed():
    names = {p.relative_to(DOCS).as_posix() for p in PAGES}
    for page in ("index.rst", "user-guide/generators.rst", "user-guide/pipeline.rst", "user-guide/seeds.rst",
                 "user-guide/masks-and-capture.rst", "troubleshooting.rst"):
        assert page in names, page
        assert python_blocks((DOCS / page).read_text()), f"{page} has no python example"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(DOCS).as_posix())
def test_page_examples_run(page, tmp_path, monkeypatch):
    import matplotlib

    matplotlib.use("Agg")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # examples writing temp files stay in tmp_path
    monkeypatch.chdir(tmp_path)
    rel = page.relative_to(DOCS).as_posix()
    module = "docs_" + re.sub(r"\W", "_", rel[: -len(".rst")])
    ns = {"__name__": module}
    for n, (line, src) in enumerate(python_blocks(page.read_text()), start=1):
        # a real (linecache) file name, so Warp can read the source of kernels defined in the docs
        filename = f"<docs/{rel}: block {n}, line {line}>"
        linecache.cache[filename] = (len(src), None, src.splitlines(keepends=True), filename)
        try:
            exec(compile(src, filename, "exec"), ns)
        except Exception as exc:
            pytest.fail(f"docs/{rel}: code block {n} (line {line}) raised {type(exc).__name__}: {exc}\n\n{src}")


def test_sphinx_build_has_no_warnings(tmp_path):
    out = tmp_path / "html"
    cmd = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
           "-d", str(tmp_path / "doctrees"), str(DOCS), str(out)]
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, f"sphinx-build failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
    for page in PAGES:
        html = out / page.relative_to(DOCS).with_suffix(".html")
        assert html.is_file(), html
    assert (out / "_images" / "courses.png").is_file() or (out / "_static" / "courses.png").is_file()
    assert "courses.png" in (out / "user-guide" / "generators.html").read_text()


# -- pictures -------------------------------------------------------------------------------------
def png_size(path: pathlib.Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == PNG_SIGNATURE, f"{path} is not a PNG"
    assert data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


@pytest.mark.parametrize("name", ["courses.png", "variants.png"])
def test_committed_pictures(name):
    path = DOCS / "_static" / name
    assert path.is_file(), f"{path} is missing; run python docs/make_pictures.py"
    assert 10_000 < path.stat().st_size < 1_000_000
    w, h = png_size(path)
    assert w >= 600 and h >= 300
    referenced = "".join(p.read_text() for p in PAGES)
    assert f"/_static/{name}" in referenced


def test_plot_does_not_import_matplotlib_at_import_time():
    code = "import sys, track_gen.plot; assert 'matplotlib' not in sys.modules, 'matplotlib imported'"
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr


@pytest.fixture(scope="module")
def generators():
    import track_gen as tg
    from track_gen.pipeline import presets

    return {
        "tracks": tg.TrackGenerator(presets.track(6, "cpu"), seeds=42),
        "gates": tg.GateGenerator(presets.gates(6, "cpu", gate_width=1.0), seeds=7),
        # impossible on purpose: loops longer than fit the square, gates wider than their spacing
        "bad_tracks": tg.TrackGenerator(presets.track(4, "cpu", min_length=38.0, max_attempts=2), seeds=3),
        "bad_gates": tg.GateGenerator(presets.gates(4, "cpu", gate_width=4.0, max_attempts=1), seeds=3),
        "sprints": tg.GateGenerator(presets.gates(3, "cpu", gate_width=1.0, closed=False), seeds=3),
    }


def test_contact_sheet_writes_png(generators, tmp_path):
    from track_gen.plot import contact_sheet

    path = contact_sheet(generators["tracks"], generators["gates"], tmp_path / "sub" / "sheet.png", envs=6, cols=3)
    assert path == tmp_path / "sub" / "sheet.png" and path.is_file()
    assert 5_000 < path.stat().st_size < 1_000_000
    w, h = png_size(path)
    assert w > 500 and h > w  # 3 columns, 4 rows (2 of tracks, 2 of gates)

    only_gates = contact_sheet(gate_gen=generators["gates"], path=tmp_path / "gates.png", envs=2, title="gates")
    w, h = png_size(only_gates)
    assert w > h  # one row of two panels


def test_contact_sheet_draws_invalid_envs(generators, tmp_path):
    from track_gen.plot import contact_sheet

    bad_t, bad_g = generators["bad_tracks"], generators["bad_gates"]
    assert not bad_t.result.valid.numpy().any() and not bad_g.result.valid.numpy().any()
    path = contact_sheet(bad_t, bad_g, tmp_path / "invalid.png", envs=4, cols=4)
    assert png_size(path)[0] > 0
    # open sprints: the path through the gates is not closed
    path = contact_sheet(None, generators["sprints"], tmp_path / "sprints.png")
    assert png_size(path)[0] > 0


def test_draw_functions_on_own_axes(generators):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    import track_gen as tg
    from track_gen.pipeline import presets
    from track_gen.plot import draw_gates, draw_track, host_result

    hilly = tg.TrackGenerator(presets.track(2, "cpu", elevated=True), seeds=3)
    fig = Figure(figsize=(6, 3))
    FigureCanvasAgg(fig)
    a, b = fig.subplots(1, 2)
    lines = draw_track(a, host_result(hilly), 1, show_points=True, size=10.0)
    assert lines is not None  # elevated: the centerline is colored by height
    assert draw_track(a, generators["tracks"].result, 0, color_by_z=False) is None
    bars = draw_gates(b, generators["gates"], 2, size=10.0)
    assert len(bars.get_segments()) == int(generators["gates"].result.count.numpy()[2])
    assert "env 2" in b.get_title()
    draw_gates(b, generators["bad_gates"], 0)
    assert "INVALID" in b.get_title()
    fig.canvas.draw()


# -- the field tables of the generators page ----------------------------------------------------
def documented_defaults(text: str) -> dict[str, tuple[str, bool]]:
    """``{global parameter name: (default cell, marked static)}`` from the list-tables of ``text``.

    A row is ``* - field`` / ``- ``stage.param``` / ``- default`` / ``- meaning``.
    """
    rows = re.findall(
        r"^\s*\* - (?P<field>.+)\n\s+- ``(?P<param>[a-z_][a-z0-9_]*\.[a-z_][a-z0-9_]*)``\s*\n\s+- (?P<default>\S+)\s*\n"
        r"\s+- (?P<meaning>.+(?:\n\s{7,}[^*\s-].*)*)",
        text, flags=re.M,
    )
    return {param: (default, "*static*" in meaning) for _field, param, default, meaning in rows}


def test_generators_page_documents_every_parameter_and_default():
    from track_gen.pipeline import default_registry, presets

    doc = documented_defaults((DOCS / "user-guide" / "generators.rst").read_text())
    registry = default_registry()
    specs = [presets.track(1, "cpu", elevated=True), presets.gates(1, "cpu")]
    expected = {}
    for spec in specs:
        for stage in spec.stages:
            for local, ps in registry.get(stage.kind).params.items():
                expected[f"{stage.name}.{local}"] = (spec.param(f"{stage.name}.{local}"), ps.static)
    missing = sorted(set(expected) - set(doc))
    assert not missing, f"generators.rst does not document {missing}"
    for name, (value, static) in expected.items():
        cell, marked_static = doc[name]
        shown = {"True": 1, "False": 0}.get(cell, None)
        shown = float(cell) if shown is None else shown
        assert shown == float(value), f"generators.rst: {name} default is {value}, the page says {cell}"
        assert marked_static == static, f"generators.rst: {name} static={static}, the page says {marked_static}"
