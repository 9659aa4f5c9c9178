"""``BandCollision(mode="sdf")``: the band's signed distance baked per env on a grid in
``on_generate``, looked up along the footprint's boundary in ``step``.

The grid: ``n x n`` nodes (row: y, column: x), node ``(i, j)`` at ``(x0 + j cell, x0 + i cell)``;
value the exact signed distance to the edges (> 0 inside the band), plus the id of the nearest
edge segment (int16). See :class:`~track_gen.tools.collision.band.BandCollision` for the bounds.
"""

from __future__ import annotations

import warp as wp

from track_gen.tools.collision.edges import band_inward_normal, band_sign, nearest_segment
from track_gen.tools.collision.pose import GO, BodyBox, ContactRows, open_row, write, write_row

__all__ = ["MARGIN", "SIDE_PIECES", "launch_bake", "launch_sdf_step"]

#: grid cells kept around the course square by the bake
MARGIN = 2
#: the most pieces a footprint side is cut into by the step (each piece at most one cell long,
#: so the lookups per step stay bounded for a footprint much larger than a cell)
SIDE_PIECES = 64


# ------------------------------------------------------------------------------------------------
# on_generate: the bake
# ------------------------------------------------------------------------------------------------
@wp.kernel
def _band_bake_kernel(mask: wp.array(dtype=wp.int32), valid: wp.array(dtype=wp.int32),
                      left: wp.array2d(dtype=wp.vec2f), right: wp.array2d(dtype=wp.vec2f),
                      boxes: wp.array2d(dtype=wp.vec4f), K: int, C: int, x0: float, cell: float,
                      grid_out: wp.array3d(dtype=wp.float32), gidx_out: wp.array3d(dtype=wp.int16)):
    e, r = wp.tid()
    if mask[e] == 0:
        return
    n = grid_out.shape[2]
    if valid[e] == 0:
        for j in range(n):
            grid_out[e, r, j] = 0.0
            gidx_out[e, r, j] = wp.int16(-1)
        return
    N = left.shape[1]
    y = x0 + float(r) * cell
    warm = int(-1)
    for j in range(n):
        p = wp.vec2f(x0 + float(j) * cell, y)
        d, g, t = nearest_segment(p, left, right, boxes, e, N, K, C, warm)
        warm = g
        grid_out[e, r, j] = d * band_sign(p, left, right, e, N, g, t)
        gidx_out[e, r, j] = wp.int16(g)


def launch_bake(ctx, mask, comp) -> None:
    """Bake the grid of the masked envs (one thread per env and grid row); ``comp`` is the
    BandCollision (its edges, chunk boxes and grid)."""
    wp.launch(_band_bake_kernel, dim=(ctx.num_envs, comp.grid.shape[1]), device=ctx.device,
              inputs=[mask, ctx.result.valid, comp.left, comp.right, comp.boxes, comp._K, comp._C, comp.origin,
                      comp.cell],
              outputs=[comp.grid, comp.grid_index])


# ------------------------------------------------------------------------------------------------
# step: lookups along the footprint
# ------------------------------------------------------------------------------------------------
@wp.func
def _grid_lookup(grid: wp.array3d(dtype=wp.float32), e: int, x0: float, cell: float, p: wp.vec2f):
    """Bilinear value and gradient of the grid at ``p``, plus the (row, col) of the nearest node.
    Outside the grid: the value at the clamped point minus the distance to it (a deeper, never
    shallower, estimate), the gradient pointing back to the grid."""
    n = grid.shape[2]
    top = float(n - 1)
    fx = (p[0] - x0) / cell
    fy = (p[1] - x0) / cell
    cx = wp.clamp(fx, 0.0, top)
    cy = wp.clamp(fy, 0.0, top)
    ix = wp.min(int(wp.floor(cx)), n - 2)
    iy = wp.min(int(wp.floor(cy)), n - 2)
    tx = cx - float(ix)
    ty = cy - float(iy)
    v00 = grid[e, iy, ix]
    v01 = grid[e, iy, ix + 1]
    v10 = grid[e, iy + 1, ix]
    v11 = grid[e, iy + 1, ix + 1]
    val = (1.0 - ty) * ((1.0 - tx) * v00 + tx * v01) + ty * ((1.0 - tx) * v10 + tx * v11)
    gx = ((1.0 - ty) * (v01 - v00) + ty * (v11 - v10)) / cell
    gy = ((1.0 - tx) * (v10 - v00) + tx * (v11 - v01)) / cell
    out = wp.vec2f((cx - fx) * cell, (cy - fy) * cell)
    lo = wp.length(out)
    grad = wp.vec2f(gx, gy)
    if lo > 0.0:
        val = val - lo
        grad = out / lo
    rx = wp.min(int(wp.floor(cx + 0.5)), n - 1)
    ry = wp.min(int(wp.floor(cy + 0.5)), n - 1)
    return val, grad, ry, rx


@wp.kernel
def _band_sdf_kernel(x0: float, cell: float, max_side: int,
                     valid: wp.array(dtype=wp.int32), grid: wp.array3d(dtype=wp.float32),
                     gidx: wp.array3d(dtype=wp.int16), nrm: wp.array2d(dtype=wp.vec2f), body: BodyBox,
                     contacts_out: ContactRows):
    agent = wp.tid()  # one thread per agent, against the course of its env
    e = agent // body.agents
    verdict, p3, c, u, v, ha, hb = open_row(agent, e, valid[e] != 0, body)
    if verdict != GO:
        write_row(agent, verdict, contacts_out)
        return
    best, bgrad, br, bc = _grid_lookup(grid, e, x0, cell, c)
    # the boundary, walked counter-clockwise from corner (+a, +b): each side cut into pieces of
    # at most one cell (at most max_side pieces), every piece end sampled (corners included)
    nx = wp.clamp(int(wp.ceil(2.0 * ha / cell)), 1, max_side)
    ny = wp.clamp(int(wp.ceil(2.0 * hb / cell)), 1, max_side)
    for s in range(4):
        sa = wp.vec2f(ha, hb)
        sb = wp.vec2f(-ha, hb)
        m = nx
        if s == 1:
            sa = wp.vec2f(-ha, hb)
            sb = wp.vec2f(-ha, -hb)
            m = ny
        elif s == 2:
            sa = wp.vec2f(-ha, -hb)
            sb = wp.vec2f(ha, -hb)
            m = nx
        elif s == 3:
            sa = wp.vec2f(ha, -hb)
            sb = wp.vec2f(ha, hb)
            m = ny
        for k in range(m):
            f = float(k) / float(m)
            pb = sa + f * (sb - sa)
            val, grad, rr, cc = _grid_lookup(grid, e, x0, cell, c + pb[0] * u + pb[1] * v)
            if val < best:
                best = val
                bgrad = grad
                br = rr
                bc = cc
    idx = wp.int32(gidx[e, br, bc])
    n3 = wp.vec3f(0.0, 0.0, 0.0)
    lg = wp.length(bgrad)
    if lg > 1.0e-12:
        n3 = wp.vec3f(bgrad[0] / lg, bgrad[1] / lg, 0.0)
    elif idx >= 0:
        n3 = band_inward_normal(nrm, e, nrm.shape[1], idx)
    write(agent, contacts_out, best, n3, idx)


def launch_sdf_step(ctx, comp) -> None:
    """One ``"sdf"`` step of the BandCollision ``comp`` for every env."""
    r = ctx.result
    wp.launch(_band_sdf_kernel, dim=ctx.num_agents, device=ctx.device,
              inputs=[comp.origin, comp.cell, SIDE_PIECES, r.valid, comp.grid, comp.grid_index, r.normal,
                      comp._pose()],
              outputs=[comp._outputs()])
