// Shared by the looks: value noise on hash2 (common.wgsl), smoothstep01.
// Twin: core/src/looks/mod.rs (hash3, value_noise2, value_noise3).

fn lattice(h: u32) -> f32 {
    return f32(h & 0xffffu) / 65535.0;
}

fn hash3(x: i32, y: i32, z: i32) -> u32 {
    return hash2(x, bitcast<i32>(bitcast<u32>(y) ^ (bitcast<u32>(z) * 0x9e3779b9u)));
}

fn smooth01(t: f32) -> f32 {
    let c = clamp(t, 0.0, 1.0);
    return c * c * (3.0 - 2.0 * c);
}

fn value_noise2(x: f32, y: f32) -> f32 {
    let f = floor(vec2<f32>(x, y));
    let s = vec2<f32>(smooth01(x - f.x), smooth01(y - f.y));
    let i = vec2<i32>(f);
    let h00 = lattice(hash2(i.x, i.y));
    let h10 = lattice(hash2(i.x + 1, i.y));
    let h01 = lattice(hash2(i.x, i.y + 1));
    let h11 = lattice(hash2(i.x + 1, i.y + 1));
    let top = h00 + (h10 - h00) * s.x;
    let bottom = h01 + (h11 - h01) * s.x;
    return top + (bottom - top) * s.y;
}

fn noise_plane(i: vec3<i32>, dz: i32, s: vec3<f32>) -> f32 {
    let h00 = lattice(hash3(i.x, i.y, i.z + dz));
    let h10 = lattice(hash3(i.x + 1, i.y, i.z + dz));
    let h01 = lattice(hash3(i.x, i.y + 1, i.z + dz));
    let h11 = lattice(hash3(i.x + 1, i.y + 1, i.z + dz));
    let top = h00 + (h10 - h00) * s.x;
    let bottom = h01 + (h11 - h01) * s.x;
    return top + (bottom - top) * s.y;
}

fn value_noise3(p: vec3<f32>) -> f32 {
    let f = floor(p);
    let s = vec3<f32>(smooth01(p.x - f.x), smooth01(p.y - f.y), smooth01(p.z - f.z));
    let i = vec3<i32>(f);
    let a = noise_plane(i, 0, s);
    let b = noise_plane(i, 1, s);
    return a + (b - a) * s.z;
}
