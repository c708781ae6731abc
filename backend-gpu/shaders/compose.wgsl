// Pass 8, compose: the composed mask moves toward max(visibility, scripted
// sight, mapped * mapped value * alpha, memory * explored * alpha) by at most
// the fade-in step (up) or relax step (down). Sets flags[0] when a texel
// changed. Twin: backend-cpu/src/passes/settle.rs (memory_compose_span).

@group(0) @binding(0) var<uniform> params: FrameParams;
@group(0) @binding(1) var<storage, read> blur: array<u32>;
@group(0) @binding(2) var<storage, read> memory: array<u32>;
@group(0) @binding(3) var<storage, read_write> compose: array<u32>;
@group(0) @binding(4) var<storage, read_write> flags: array<atomic<u32>>;
@group(0) @binding(5) var<storage, read> reveal: array<u32>;
@group(0) @binding(6) var<storage, read> mapped: array<u32>;

@compute @workgroup_size(8, 8)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x >= params.width || id.y >= params.height) {
        return;
    }
    let i = id.y * params.width + id.x;
    let explored = mask_mul(mask_mul(params.explored_value, memory[i]), params.show_memory_alpha);
    let known = mask_mul(mask_mul(params.mapped_value, mapped[i]), params.show_memory_alpha);
    let t = max(max(blur[i], reveal[i] & 0xffffu), max(explored, known));
    let cur = compose[i];
    var next: u32;
    if (t > cur) {
        next = cur + min(t - cur, params.fade_in_step);
    } else {
        next = cur - min(cur - t, params.relax_step);
    }
    if (next != cur) {
        compose[i] = next;
        atomicOr(&flags[0], 1u);
    }
}
