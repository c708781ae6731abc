// Pass 2, mips: one level of the coverage max pyramid per dispatch.
// levels holds level 0 (a copy of coverage) and every level above it;
// pass.a / pass.b: offsets of the source and destination levels,
// pass.c / pass.d: source width and height. Twin: backend-cpu/src/passes/mips.rs.

@group(0) @binding(0) var<uniform> pass_params: PassParams;
@group(0) @binding(1) var<storage, read_write> levels: array<u32>;

@compute @workgroup_size(8, 8)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let sw = pass_params.c;
    let sh = pass_params.d;
    let dw = (sw + 1u) / 2u;
    let dh = (sh + 1u) / 2u;
    if (id.x >= dw || id.y >= dh) {
        return;
    }
    var m = 0u;
    for (var dy = 0u; dy < 2u; dy = dy + 1u) {
        for (var dx = 0u; dx < 2u; dx = dx + 1u) {
            let sx = 2u * id.x + dx;
            let sy = 2u * id.y + dy;
            if (sx < sw && sy < sh) {
                m = m | levels[pass_params.a + sy * sw + sx];
            }
        }
    }
    levels[pass_params.b + id.y * dw + id.x] = m;
}
