"""The benchmark's tables, written to ``eval.md``: the suite table (policy, zero action, random) with
95% intervals, the reference comparison and the pictures. (The training report is :mod:`track_gen_isaac.report`.)"""

from __future__ import annotations

from pathlib import Path

__all__ = ["write_markdown", "layout_table", "ROWS"]

#: (label, key, format) of the table rows
ROWS = [
    ("completion rate", "completion_rate", "{:.3f}"),
    ("gates per course", "gates_per_course", "{:.2f}"),
    ("first lap (standing start) [s]", "first_lap_time_mean_s", "{:.2f}"),
    ("flying lap [s]", "lap_time_mean_s", "{:.2f}"),
    ("reference first lap [s]", "reference_first_lap_time_mean_s", "{:.2f}"),
    ("reference flying lap [s]", "reference_lap_time_mean_s", "{:.2f}"),
    ("first lap / reference", "first_lap_ratio", "{:.2f}"),
    ("flying lap / reference", "lap_time_ratio", "{:.2f}"),
    ("course-line reference flying lap [s]", "line_reference_lap_time_mean_s", "{:.2f}"),
    ("flying lap / course-line reference", "line_lap_time_ratio", "{:.2f}"),
    ("mean speed [m/s]", "mean_speed_mps", "{:.2f}"),
    ("top speed [m/s]", "top_speed_mps", "{:.2f}"),
    ("crash rate (any failure)", "crash_rate", "{:.3f}"),
    ("collision rate", "collision_rate", "{:.3f}"),
    ("missed-gate rate", "missed_gate_rate", "{:.3f}"),
    ("off-course rate", "off_course_rate", "{:.3f}"),
    ("altitude rate", "altitude_rate", "{:.3f}"),
    ("time-out rate", "timeout_rate", "{:.3f}"),
]


def _cell(stats: dict, key: str, fmt: str) -> str:
    v = stats.get(key)
    if v is None:
        return "--"
    ci = stats.get(key + "_ci95") or [None, None]
    if ci[0] is None:
        return fmt.format(v)
    return f"{fmt.format(v)} [{fmt.format(ci[0])}, {fmt.format(ci[1])}]"


def write_markdown(path: Path, result: dict) -> Path:
    """Write ``eval.md`` for an ``eval.json`` dict."""
    lines = [f"# Evaluation of `{result['checkpoint']}`", ""]
    veh = result["vehicle"]
    for w in result.get("warnings", []):
        lines += [f"> **Warning**: {w}", ""]
    for name, s in result["suites"].items():
        suite = s["suite"]
        base = s["baselines"]
        lines += [f"## Suite `{name}`", "",
                  f"{suite['description']}. Task `{suite['task']}`, course seed {suite['seed']}, "
                  f"{s['num_courses']} courses, each flown once from its start pose for {suite['laps']} laps or "
                  f"{suite['time_limit_s']:g} s. Means over courses with 95% bootstrap intervals "
                  f"({result['bootstrap']['samples']} resamples); lap times over the courses that flew them.", "",
                  "| metric | policy | " + " | ".join(f"{k} policy" for k in base) + " |",
                  "|---|---|" + "---|" * len(base)]
        for label, key, fmt in ROWS:
            lines.append(f"| {label} | {_cell(s, key, fmt)} | " + " | ".join(_cell(b, key, fmt) for b in base.values())
                         + " |")
        med = s.get("lap_time_ratio_median")
        lines += ["", f"Flying laps: {s['courses_with_flying_lap']} of {s['num_courses']} courses; median lap-time "
                  f"ratio {med:.2f}." if med is not None else "", "",
                  f"Endings: {', '.join(f'{k} {v}' for k, v in s['endings'].items())}.", "",
                  f"Reference: {veh['reference']}" if veh.get("reference") else
                  f"Reference: a point mass with thrust up to {veh['thrust_to_weight']:.2f} m g "
                  f"({veh['max_accel_mps2']:.2f} m/s^2) in any direction, gravity, no drag, on the fastest path "
                  "it finds through the checkpoint openings (shrunk by the body's half size; "
                  "`track_gen.reference.path`). The course-line reference flies the course line itself "
                  "(`track_gen.reference.lap`). The point mass turns its thrust instantly, so a real flight sits "
                  "above a ratio of 1.", "",
                  "![lap-time ratios](lap_time_ratio.png)", "", "![best and worst course](best_worst.png)", ""]
        if suite.get("layout"):
            lines += [f"Layout file: `{suite['layout']}`. A one-pass layout is flown once: its time is the first "
                      "lap (standing start to the last gate) and its ratio the first-lap ratio.", "",
                      "![every run over the layout](paths.png)", ""]
    t = result.get("timing", {})
    for name, tm in t.items():
        lines.append(f"Wall time ({name}, {result['device']}): {tm['total_s']:.0f} s in all, reference "
                     f"{tm['reference_s']:.1f} s.")
    path.write_text("\n".join(lines) + "\n")
    return path


def layout_table(table: dict) -> str:
    """``layouts.md``: one row per layout (completion, gates, first-pass time and its ratio to the
    minimum-time reference, crash rate, endings), for an :func:`~track_gen_isaac.evaluate.evaluate_layouts` dict."""
    lines = [f"# Real layouts, zero-shot: `{table['checkpoint']}`", "",
             f"{table['num_courses']} runs per layout, each from the layout's start pose with the gates jittered by "
             f"its tolerance (5 cm where the file gives none); plant `{table['dynamics']}`. Means with 95% bootstrap intervals; a one-pass layout's "
             "time is the standing-start pass through every gate, its ratio against the minimum-time reference.", "",
             "| layout | completion | gates passed | time [s] | reference [s] | ratio | crash rate | endings |",
             "|---|---|---|---|---|---|---|---|"]
    for name, s in table["layouts"].items():
        gates = s.get("gates_per_course")
        lines.append(
            f"| `{name}` | {_cell(s, 'completion_rate', '{:.2f}')} | {'--' if gates is None else f'{gates:.1f}'} | "
            f"{_cell(s, 'first_lap_time_mean_s', '{:.2f}')} | {_cell(s, 'reference_first_lap_time_mean_s', '{:.2f}')} | "
            f"{_cell(s, 'first_lap_ratio', '{:.2f}')} | {_cell(s, 'crash_rate', '{:.2f}')} | "
            f"{', '.join(f'{k} {v}' for k, v in (s.get('endings') or {}).items())} |")
    return "\n".join(lines) + "\n"

