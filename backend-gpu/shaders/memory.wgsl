// Pass 7, memory: what was seen (blurred visibility, and the scripted sight
// memory keeps) raises memory where it is above 0; elsewhere memory falls by
// the forget step (not below 0); frozen memory does not change. The mapped
// state rises to the scripted map plane. Sets flags[0] when a texel changed.
// Twin: backend-cpu/src/passes/settle.rs (memory_compose_span).

@group(0) @binding(0) var<uniform> params: FrameParams;
@group(0) @binding(1) var<storage, read> blur: array<u32>;
@group(0) @binding(2) var<storage, read_write> memory: array<u32>;
@group(0) @binding(3) var<storage, read_write> flags: array<atomic<u32>>;
// Scripted sight | kept << 16, and the map plane.
@group(0) @binding(4) var<storage, read> reveal: array<u32>;
@group(0) @binding(5) var<storage, read> reveal_map: array<u32>;
@group(0) @binding(6) var<storage, read_write> mapped: array<u32>;

@compute @workgroup_size(8, 8)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x >= params.width || id.y >= params.height) {
        return;
    }
    let i = id.y * params.width + id.x;
    let add = reveal_map[i];
    let known = mapped[i];
    if (add > known) {
        mapped[i] = add;
        atomicOr(&flags[0], 1u);
    }
    if (params.freeze_memory != 0u) {
        return;
    }
    let m = memory[i];
    let v = max(blur[i], reveal[i] >> 16u);
    var next: u32;
    if (v > 0u) {
        next = max(m, v);
    } else {
        next = m - min(m, min(params.forget_step, MASK_MAX));
    }
    if (next != m) {
        memory[i] = next;
        atomicOr(&flags[0], 1u);
    }
}
