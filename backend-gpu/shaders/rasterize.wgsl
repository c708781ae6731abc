// Pass 1, rasterize: blockers and the height capture -> coverage + height.
// One invocation per internal texel of a region (the whole grid for a
// build, a changed rectangle for a local update); `capture` holds the
// region's captured heights, row by row. Twin: backend-cpu/src/passes/rasterize.rs
// (closed shapes: a texel centre on an outline is covered).

@group(0) @binding(0) var<uniform> params: FrameParams;
@group(0) @binding(1) var<storage, read> circles: array<CircleTexel>;
@group(0) @binding(2) var<storage, read> polygons: array<PolygonTexel>;
@group(0) @binding(3) var<storage, read> vertices: array<vec2<i32>>;
@group(0) @binding(4) var<storage, read> capture: array<i32>;
@group(0) @binding(5) var<storage, read_write> coverage: array<u32>;
@group(0) @binding(6) var<storage, read_write> height: array<i32>;
// The region (first column, first row, columns, rows) and how many
// circles and polygons cover it.
@group(0) @binding(7) var<storage, read> region: array<u32, 6>;

fn polygon_contains(p: PolygonTexel, px: i32, py: i32) -> bool {
    var inside = false;
    for (var i = 0u; i < p.count; i = i + 1u) {
        let a = vertices[p.first + i];
        let b = vertices[p.first + (i + 1u) % p.count];
        if ((px - a.x) * (b.y - a.y) == (py - a.y) * (b.x - a.x) && px >= min(a.x, b.x) && px <= max(a.x, b.x) && py >= min(a.y, b.y) && py <= max(a.y, b.y)) {
            return true;
        }
        if ((a.y > py) != (b.y > py)) {
            let lhs = (px - a.x) * (b.y - a.y);
            let rhs = (py - a.y) * (b.x - a.x);
            var right = lhs > rhs;
            if (b.y > a.y) {
                right = lhs < rhs;
            }
            if (right) {
                inside = !inside;
            }
        }
    }
    return inside;
}

@compute @workgroup_size(8, 8)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x >= region[2] || id.y >= region[3]) {
        return;
    }
    let x = region[0] + id.x;
    let y = region[1] + id.y;
    let i = y * params.width + x;
    let px = centre_q(i32(x));
    let py = centre_q(i32(y));
    var covered = false;
    var top = HEIGHT_FLOOR;
    if (params.has_capture != 0u) {
        let c = capture[id.y * region[2] + id.x];
        if (c != CAPTURE_EMPTY) {
            covered = true;
            top = c;
        }
    }
    for (var k = 0u; k < region[4]; k = k + 1u) {
        let c = circles[k];
        let dx = px - c.x;
        let dy = py - c.y;
        if (abs(dx) > c.radius || abs(dy) > c.radius) {
            continue;
        }
        if (u32(dx * dx) + u32(dy * dy) <= u32(c.radius * c.radius)) {
            if (!covered || top < c.height) {
                top = c.height;
            }
            covered = true;
        }
    }
    for (var k = 0u; k < region[5]; k = k + 1u) {
        let p = polygons[k];
        if (polygon_contains(p, px, py)) {
            if (!covered || top < p.height) {
                top = p.height;
            }
            covered = true;
        }
    }
    coverage[i] = select(0u, 1u, covered);
    height[i] = top;
}
