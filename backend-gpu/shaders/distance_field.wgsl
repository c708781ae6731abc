// Pass 3, distance field: exact squared Euclidean distance to the nearest
// covered texel at df_scale, in three dispatches (entry points): `coarse`
// (block OR of coverage), `columns` (vertical distance per column), `rows`
// (lower envelope of parabolas per row). Integer only, so the result is the
// unique exact transform. Twin: backend-cpu/src/passes/distance_field.rs.

@group(0) @binding(0) var<uniform> params: FrameParams;
@group(0) @binding(1) var<storage, read> coverage: array<u32>;
@group(0) @binding(2) var<storage, read_write> coarse: array<u32>;
@group(0) @binding(3) var<storage, read_write> vertical: array<i32>;
@group(0) @binding(4) var<storage, read_write> envelope_v: array<i32>;
@group(0) @binding(5) var<storage, read_write> envelope_z: array<i32>;
@group(0) @binding(6) var<storage, read_write> field: array<u32>;

@compute @workgroup_size(8, 8)
fn coarse_pass(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x >= params.df_width || id.y >= params.df_height) {
        return;
    }
    var m = 0u;
    for (var dy = 0u; dy < params.df_scale; dy = dy + 1u) {
        for (var dx = 0u; dx < params.df_scale; dx = dx + 1u) {
            let x = id.x * params.df_scale + dx;
            let y = id.y * params.df_scale + dy;
            if (x < params.width && y < params.height && coverage[y * params.width + x] != 0u) {
                m = 1u;
            }
        }
    }
    coarse[id.y * params.df_width + id.x] = m;
}

@compute @workgroup_size(64)
fn columns_pass(@builtin(global_invocation_id) id: vec3<u32>) {
    let dw = params.df_width;
    let dh = params.df_height;
    if (id.x >= dw) {
        return;
    }
    let inf = i32(dw + dh) + 1;
    var last = -1;
    for (var y = 0u; y < dh; y = y + 1u) {
        if (coarse[y * dw + id.x] != 0u) {
            last = i32(y);
        }
        var d = inf;
        if (last >= 0) {
            d = i32(y) - last;
        }
        vertical[y * dw + id.x] = d;
    }
    last = -1;
    for (var yy = i32(dh) - 1; yy >= 0; yy = yy - 1) {
        let y = u32(yy);
        if (coarse[y * dw + id.x] != 0u) {
            last = yy;
        }
        if (last >= 0) {
            vertical[y * dw + id.x] = min(vertical[y * dw + id.x], last - yy);
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
            field[base + x] = FAR;
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
        field[base + x] = u32((xi - q) * (xi - q) + g * g);
    }
}
