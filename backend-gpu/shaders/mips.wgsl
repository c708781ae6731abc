// Pass 2, mips: one level of the coverage max pyramid per dispatch.
// `mips` holds level 0 (a copy of coverage) and every level above it.
// Twin: backend-cpu/src/passes/mips.rs.

// The level a dispatch builds (Rust twin: `MipStep` in src/passes/mips.rs).
struct MipStep {
    // Offsets of the source and destination levels in `mips`.
    source_offset: u32,
    target_offset: u32,
    // The source level's size.
    source_width: u32,
    source_height: u32,
    // The texels of the level built that this dispatch redoes: first
    // column and row, columns and rows (the whole level for a build).
    region_x: u32,
    region_y: u32,
    region_width: u32,
    region_rows: u32,
}

@group(0) @binding(0) var<uniform> step: MipStep;
@group(0) @binding(1) var<storage, read_write> mips: array<u32>;

@compute @workgroup_size(8, 8)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let sw = step.source_width;
    let sh = step.source_height;
    let dw = (sw + 1u) / 2u;
    let dh = (sh + 1u) / 2u;
    let x = step.region_x + id.x;
    let y = step.region_y + id.y;
    if (id.x >= step.region_width || id.y >= step.region_rows || x >= dw || y >= dh) {
        return;
    }
    var m = 0u;
    for (var dy = 0u; dy < 2u; dy = dy + 1u) {
        for (var dx = 0u; dx < 2u; dx = dx + 1u) {
            let sx = 2u * x + dx;
            let sy = 2u * y + dy;
            if (sx < sw && sy < sh) {
                m = m | mips[step.source_offset + sy * sw + sx];
            }
        }
    }
    mips[step.target_offset + y * dw + x] = m;
}
