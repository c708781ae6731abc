// Pass 3, distance field: exact squared Euclidean distance to the nearest
// covered texel at df_scale, in three dispatches (entry points): `coarse`
// (block OR of coverage), `columns` (vertical distance per column), `rows`
// (lower envelope of parabolas per row). Integer only, so the result is the
// unique exact transform. Twin: backend-cpu/src/passes/distance_field.rs.
//
// A local update (a blocker changed) runs `coarse` and `columns` over the
// field texels and columns of `region` only: no other coarse texel or
// column distance can change. `columns` flags each row in which a column
// distance changed, and `rows` redoes the flagged rows only (every row when
// `region.full`), clearing the flags: a row whose column distances all
// stayed keeps its field.

// Rust twin: `DfRegion` in src/passes/distance_field.rs.
struct DfRegion {
    x0: u32,
    y0: u32,
    x1: u32,
    y1: u32,
    full: u32,
    pad0: u32,
    pad1: u32,
    pad2: u32,
}

@group(0) @binding(0) var<uniform> params: FrameParams;
@group(0) @binding(1) var<storage, read> coverage: array<u32>;
@group(0) @binding(2) var<storage, read_write> coarse: array<u32>;
@group(0) @binding(3) var<storage, read_write> vertical: array<i32>;
@group(0) @binding(4) var<storage, read_write> envelope_v: array<i32>;
@group(0) @binding(5) var<storage, read_write> envelope_z: array<i32>;
@group(0) @binding(6) var<storage, read_write> distance_field: array<u32>;
@group(0) @binding(7) var<storage, read_write> row_changed: array<atomic<u32>>;
@group(0) @binding(8) var<uniform> region: DfRegion;

@compute @workgroup_size(8, 8)
fn coarse_pass(@builtin(global_invocation_id) id: vec3<u32>) {
    let cx = region.x0 + id.x;
    let cy = region.y0 + id.y;
    if (cx >= region.x1 || cy >= region.y1) {
        return;
    }
    var m = 0u;
    for (var dy = 0u; dy < params.df_scale; dy = dy + 1u) {
        for (var dx = 0u; dx < params.df_scale; dx = dx + 1u) {
            let x = cx * params.df_scale + dx;
            let y = cy * params.df_scale + dy;
            if (x < params.width && y < params.height && coverage[y * params.width + x] != 0u) {
                m = 1u;
            }
        }
    }
    coarse[cy * params.df_width + cx] = m;
}

@compute @workgroup_size(64)
fn columns_pass(@builtin(global_invocation_id) id: vec3<u32>) {
    let dw = params.df_width;
    let dh = params.df_height;
    let x = region.x0 + id.x;
    if (x >= region.x1) {
        return;
    }
    let inf = i32(dw + dh) + 1;
    // Upward first, into `envelope_z` as scratch (the rows pass writes it
    // afresh for each row it redoes): the distance to the nearest covered
    // texel at or below each row.
    var last = -1;
    for (var yy = i32(dh) - 1; yy >= 0; yy = yy - 1) {
        let y = u32(yy);
        if (coarse[y * dw + x] != 0u) {
            last = yy;
        }
        var d = inf;
        if (last >= 0) {
            d = last - yy;
        }
        envelope_z[y * dw + x] = d;
    }
    // Downward, the nearer of the two, written where it changed.
    last = -1;
    for (var y = 0u; y < dh; y = y + 1u) {
        if (coarse[y * dw + x] != 0u) {
            last = i32(y);
        }
        var d = envelope_z[y * dw + x];
        if (last >= 0) {
            d = min(d, i32(y) - last);
        }
        if (vertical[y * dw + x] != d) {
            vertical[y * dw + x] = d;
            atomicOr(&row_changed[y], 1u);
        }
    }
}

fn parabola(g: i32, q: i32) -> i32 {
    return g * g + q * q;
}

@compute @workgroup_size(64)
fn rows_pass(@builtin(global_invocation_id) id: vec3<u32>) {
    let dw = params.df_width;
    let dh = params.df_height;
    if (id.x >= dh) {
        return;
    }
    let row = id.x;
    let changed = atomicExchange(&row_changed[row], 0u);
    if (region.full == 0u && changed == 0u) {
        return;
    }
    let inf = i32(dw + dh) + 1;
    let base = row * dw;
    let vb = row * (dw + 1u);
    var count = 0u;
    for (var q = 0u; q < dw; q = q + 1u) {
        let gq = vertical[base + q];
        if (gq >= inf) {
            continue;
        }
        var boundary = -2147483647 - 1;
        while (count > 0u) {
            let last = envelope_v[vb + count - 1u];
            let gl = vertical[base + u32(last)];
            let s = div_floor(parabola(gq, i32(q)) - parabola(gl, last), 2 * (i32(q) - last));
            if (s <= envelope_z[vb + count - 1u]) {
                count = count - 1u;
            } else {
                boundary = s;
                break;
            }
        }
        envelope_v[vb + count] = i32(q);
        envelope_z[vb + count] = boundary;
        count = count + 1u;
    }
    if (count == 0u) {
        for (var x = 0u; x < dw; x = x + 1u) {
            distance_field[base + x] = FAR;
        }
        return;
    }
    var k = 0u;
    for (var x = 0u; x < dw; x = x + 1u) {
        let xi = i32(x);
        while (k + 1u < count && envelope_z[vb + k + 1u] < xi) {
            k = k + 1u;
        }
        let q = envelope_v[vb + k];
        let g = vertical[base + u32(q)];
        distance_field[base + x] = u32((xi - q) * (xi - q) + g * g);
    }
}
