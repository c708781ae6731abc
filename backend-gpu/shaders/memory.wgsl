// Pass 7, memory: max(memory, visibility) where seen, minus the forget step
// where unseen (not below 0); frozen memory does not change. Sets flags[0]
// when a texel changed. Twin: backend-cpu/src/passes/memory.rs.

@group(0) @binding(0) var<uniform> params: FrameParams;
@group(0) @binding(1) var<storage, read> blurred: array<u32>;
@group(0) @binding(2) var<storage, read_write> memory: array<u32>;
@group(0) @binding(3) var<storage, read_write> flags: array<atomic<u32>>;

@compute @workgroup_size(8, 8)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x >= params.width || id.y >= params.height || params.freeze_memory != 0u) {
        return;
    }
    let i = id.y * params.width + id.x;
    let m = memory[i];
    let v = blurred[i];
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
