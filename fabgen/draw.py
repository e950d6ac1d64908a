"""``fabgen draw SPEC -o fabric.svg``: a picture of the planned fabric that stays readable at 24k GPUs.

One pod is drawn (pod 0: its leaves by rail, its spines, its host blocks) and
the rest is counted: a 24k fabric has 2,048 switches and 73,728 cables, which
no picture shows one by one. Tiers are bands from top to bottom (super-spine
planes, spines, leaves coloured by rail, host blocks); every band of cables is
labelled with its count in the pod and in the whole fabric. A row longer than
fits is cut with "+N more", never scaled into a smear.

Hand-written SVG (no drawing library): every text goes through XML escaping,
numbers are integers, and the output depends only on the plan.
"""

from __future__ import annotations

from collections import Counter
from xml.sax.saxutils import escape

from fabgen.plan import FabricPlan
from fabgen.plan.model import Switch
from fabgen.targets.placement import placement

WIDTH = 1280
RAIL_COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf")
MAX_ROW = 16


def _text(x: int, y: int, text: str, size: int = 12, anchor: str = "middle", weight: str = "normal",
          fill: str = "#222") -> str:
    return (f'<text x="{x}" y="{y}" font-size="{size}" text-anchor="{anchor}" font-weight="{weight}" '
            f'fill="{fill}">{escape(text)}</text>')


def _box(x: int, y: int, w: int, h: int, fill: str, label: str = "", size: int = 10, stroke: str = "#333") -> str:
    out = f'<rect x="{x}" y="{y}" width="{w}" height="{h}" rx="3" fill="{fill}" stroke="{stroke}"/>'
    if label:
        out += _text(x + w // 2, y + h // 2 + size // 3, label, size)
    return out


def _line(x1: int, y1: int, x2: int, y2: int, colour: str = "#888", width: int = 1) -> str:
    return f'<line x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}" stroke="{colour}" stroke-width="{width}"/>'


def _row(items: list[str], left: int, right: int) -> tuple[list[tuple[int, str]], int]:
    """Centres of at most MAX_ROW items spread over [left, right], and how many were left out."""
    shown = items if len(items) <= MAX_ROW else items[:MAX_ROW - 1]
    step = (right - left) // max(len(shown), 1)
    return [(left + step * i + step // 2, item) for i, item in enumerate(shown)], len(items) - len(shown)


def _short(name: str) -> str:
    return name.rsplit("-", 1)[-1] if "-" in name else name


def draw_svg(plan: FabricPlan) -> str:
    layout = plan.layout
    tree = placement(plan)
    rails = plan.spec.fabric.rails
    by_tier: dict[str, list[Switch]] = {"leaf": [], "spine": [], "super_spine": []}
    for s in plan.switches:
        by_tier[s.tier].append(s)
    links = Counter(k.role for k in plan.links)
    gpus = sum(len(plan.spec.host_profiles[h.profile].gpus) for h in plan.hosts)
    three = layout.tiers == 3
    pod_leaves = [s for s in by_tier["leaf"] if (s.pod or 0) == 0]
    pod_spines = [s for s in by_tier["spine"] if (s.pod or 0) == 0] if three else by_tier["spine"]
    pod_groups = [g for g in tree.groups if g.startswith(next(iter(tree.groups), "p00").split("-")[0] + "-")]
    pod_hosts = sum(len(tree.groups[g]) for g in pod_groups)
    in_pod = {s.name for s in pod_leaves} | {s.name for s in pod_spines}
    pod_links = Counter(k.role for k in plan.links if k.a_device in in_pod or k.b_device in in_pod)

    left, right = 40, 900
    y_super, y_spine, y_leaf, y_host = 110, 250, 410, 570
    height = 700
    body: list[str] = []
    title = (f"{plan.spec.cluster.name}: {len(plan.hosts):,} hosts, {gpus:,} GPUs, {rails} rails, "
             f"{layout.tiers}-tier, {len(plan.switches):,} switches, {len(plan.links):,} cables")
    body.append(_text(WIDTH // 2, 30, title, 18, weight="bold"))
    pods_note = f"pod 0 of {layout.pods}" if three else "the whole fabric (one pod)"
    body.append(_text(right // 2 + left // 2, 55, f"drawn: {pods_note}; the right column counts everything", 13,
                      fill="#555"))

    # leaves of pod 0, in rail columns
    col_w = (right - left) // rails
    rail_x: dict[int, tuple[int, int]] = {}
    leaves_by_rail: dict[int, list[Switch]] = {}
    for s in pod_leaves:
        leaves_by_rail.setdefault(s.rail or 0, []).append(s)
    for rail in range(rails):
        x0 = left + rail * col_w
        colour = RAIL_COLOURS[rail % len(RAIL_COLOURS)]
        members = leaves_by_rail.get(rail, [])
        noun = "leaf" if len(members) == 1 else "leaves"
        body.append(_text(x0 + col_w // 2, y_leaf - 12, f"rail {rail}: {len(members)} {noun}", 11, fill=colour))
        shown = members[:4]
        w = max(min((col_w - 16) // max(len(shown), 1) - 4, 60), 12)
        start = x0 + (col_w - (len(shown) * (w + 4) - 4)) // 2  # centred: the cables meet the column's middle
        for i, s in enumerate(shown):
            body.append(_box(start + i * (w + 4), y_leaf, w, 26, colour, _short(s.name) if w >= 24 else "", 10))
        if len(members) > len(shown):
            body.append(_text(x0 + col_w // 2, y_leaf + 42, f"+{len(members) - len(shown)} more", 10))
        rail_x[rail] = (x0 + col_w // 2, y_leaf)

    # spines of the pod
    centres, rest = _row([s.name for s in pod_spines], left, right)
    label = f"spines of pod 0: {len(pod_spines)}" if three else f"spines: {len(pod_spines)}"
    body.append(_text(left, y_spine - 14, label, 12, anchor="start", weight="bold"))
    for x, name in centres:
        body.append(_box(x - 22, y_spine, 44, 24, "#ddd", _short(name)))
    if rest:
        body.append(_text(right - 10, y_spine + 40, f"+{rest} more", 10, anchor="end"))
    for rail, (x, y) in rail_x.items():
        for sx, _ in centres[:: max(len(centres) // 4, 1)]:
            body.append(_line(x, y, sx, y_spine + 24, RAIL_COLOURS[rail % len(RAIL_COLOURS)]))
    body.append(_text(right + 8, (y_spine + y_leaf) // 2, f"{pod_links['leaf-spine']:,} leaf-spine", 12,
                      anchor="start"))
    body.append(_text(right + 8, (y_spine + y_leaf) // 2 + 15,
                      f"{layout.leaf_spine_links} per leaf per spine", 10, anchor="start", fill="#555"))

    # super-spine planes
    if three:
        planes = sorted({s.plane or 0 for s in by_tier["super_spine"]})
        centres_p, rest_p = _row([f"plane {p}" for p in planes], left, right)
        body.append(_text(left, y_super - 14, f"super-spines: {len(planes)} planes x {layout.supers_per_plane}",
                          12, anchor="start", weight="bold"))
        for x, name in centres_p:
            body.append(_box(x - 24, y_super, 48, 24, "#f3d9d9", name.removeprefix("plane "), 10))
        if rest_p:
            body.append(_text(right - 10, y_super + 40, f"+{rest_p} more", 10, anchor="end"))
        for (sx, _), (px, _) in zip(centres, centres_p, strict=False):
            body.append(_line(sx, y_spine, px, y_super + 24, "#b55"))
        body.append(_text(right + 8, (y_super + y_spine) // 2, f"{pod_links['spine-superspine']:,} spine-super",
                          12, anchor="start"))
        body.append(_text(right + 8, (y_super + y_spine) // 2 + 15,
                          f"spine j to plane j, {layout.spine_super_links} per", 10, anchor="start", fill="#555"))
        body.append(_text(right + 8, (y_super + y_spine) // 2 + 28, "super-spine of the plane", 10,
                          anchor="start", fill="#555"))

    # host blocks (leaf groups) of the pod
    centres_h, rest_h = _row(pod_groups, left, right)
    body.append(_text(left, y_host + 60, f"host blocks of pod 0: {len(pod_groups)} leaf groups, {pod_hosts:,} hosts "
                      "(a block reaches one leaf of every rail)", 12, anchor="start", weight="bold"))
    for x, group in centres_h:
        body.append(_box(x - 34, y_host, 68, 30, "#eef", f"{len(tree.groups[group])} hosts", 10))
        for rail, (rx, ry) in rail_x.items():
            body.append(_line(x, y_host, rx, ry + 26, RAIL_COLOURS[rail % len(RAIL_COLOURS)]))
    if rest_h:
        body.append(_text(right - 10, y_host + 45, f"+{rest_h} more", 10, anchor="end"))
    body.append(_text(right + 8, (y_leaf + y_host) // 2, f"{pod_links['host-leaf']:,} host-leaf", 12,
                      anchor="start"))
    body.append(_text(right + 8, (y_leaf + y_host) // 2 + 15, f"{layout.hosts_per_leaf} hosts per leaf", 10,
                      anchor="start", fill="#555"))

    # the whole fabric, counted
    x_tab = 1070
    rows = [("whole fabric", "")]
    rows += [("pods", f"{layout.pods}"), ("leaves", f"{len(by_tier['leaf']):,}"),
             ("spines", f"{len(by_tier['spine']):,}")]
    if three:
        rows.append(("super-spines", f"{len(by_tier['super_spine']):,}"))
    rows += [("host-leaf", f"{links['host-leaf']:,}"), ("leaf-spine", f"{links['leaf-spine']:,}")]
    if three:
        rows.append(("spine-super", f"{links['spine-superspine']:,}"))
    if layout.pods > 1:
        rows.append((f"+{layout.pods - 1} pods", "like pod 0"))
    body.append(_box(x_tab - 10, 80, 200, 24 + 20 * len(rows), "#fafafa", stroke="#bbb"))
    for i, (name, value) in enumerate(rows):
        weight = "bold" if i == 0 else "normal"
        body.append(_text(x_tab, 100 + 20 * i, name, 12, anchor="start", weight=weight))
        body.append(_text(x_tab + 180, 100 + 20 * i, value, 12, anchor="end", weight=weight))
    head = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
            f'viewBox="0 0 {WIDTH} {height}" font-family="DejaVu Sans, Arial, sans-serif">')
    return "\n".join([head, f'<rect width="{WIDTH}" height="{height}" fill="white"/>', *body, "</svg>"]) + "\n"
