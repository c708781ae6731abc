//! The per-texel ray marches of the ray methods (Step Scan, DDA and its
//! hierarchical form, the distance-field march): the definitions the
//! shadowcast shortcut reproduces exactly.
use super::occlusion::Occlusion;
use murk_core::fixed::{hash2, isqrt, TEXEL_ONE};
use murk_core::RayRule;

/// One ray: from the source texel `(sx, sy)` to the target `(tx, ty)`.
pub(super) struct Ray {
    pub(super) sx: i32,
    pub(super) sy: i32,
    pub(super) tx: i32,
    pub(super) ty: i32,
    pub(super) n: i64,
    pub(super) eye: i64,
    pub(super) rise: i64,
}

impl Ray {
    /// Whether texel `(x, y)` blocks this ray.
    pub(super) fn blocks(&self, occ: &Occlusion, x: i32, y: i32) -> bool {
        let top = occ.top_at(x, y);
        if top == i32::MIN {
            return false;
        }
        let k = i64::from((x - self.sx).abs().max((y - self.sy).abs()));
        (i64::from(top) - self.eye) * self.n > self.rise * k
    }
}

pub(super) fn hard(visible: bool) -> u16 {
    if visible {
        u16::MAX
    } else {
        0
    }
}

/// Step Scan: one texel per step along the major axis, the texel nearest the
/// line (ties away from the source's axis). True when nothing blocks.
pub(super) fn step_scan(ray: &Ray, occ: &Occlusion) -> bool {
    let (ddx, ddy) = (i64::from(ray.tx - ray.sx), i64::from(ray.ty - ray.sy));
    let (nx, ny) = (ddx.abs(), ddy.abs());
    let n = nx.max(ny);
    for k in 1..n {
        // Minor coordinate: round(k * minor / n), half away from zero.
        let (x, y) = if nx >= ny {
            (i64::from(ray.sx) + ddx.signum() * k, i64::from(ray.sy) + ddy.signum() * ((2 * k * ny + n) / (2 * n)))
        } else {
            (i64::from(ray.sx) + ddx.signum() * ((2 * k * nx + n) / (2 * n)), i64::from(ray.sy) + ddy.signum() * k)
        };
        if ray.blocks(occ, x as i32, y as i32) {
            return false;
        }
    }
    true
}

/// DDA: every texel the segment between the texel centres passes through.
/// At an exact corner crossing the ray is blocked only when both texels
/// beside the corner block. With `hierarchical`, texels inside an empty
/// block of the mip chain are skipped without reading coverage; the result
/// is the same by construction. True when nothing blocks.
pub(super) fn dda(ray: &Ray, occ: &Occlusion, hierarchical: bool) -> bool {
    let (ddx, ddy) = (ray.tx - ray.sx, ray.ty - ray.sy);
    let (nx, ny) = (i64::from(ddx.abs()), i64::from(ddy.abs()));
    let (stx, sty) = (ddx.signum(), ddy.signum());
    let (mut x, mut y) = (ray.sx, ray.sy);
    let (mut ix, mut iy) = (0i64, 0i64);
    // The largest empty mip block we are inside: (level, block x, block y).
    let mut empty: Option<(usize, i32, i32)> = None;
    let mut check = |x: i32, y: i32| -> bool {
        if hierarchical {
            if let Some((l, bx, by)) = empty {
                if (x >> l, y >> l) == (bx, by) {
                    return false;
                }
            }
            empty = None;
            let mut level = 0;
            while level < occ.mips.len() && occ.mip_empty(level + 1, x, y) {
                level += 1;
            }
            if level > 0 {
                empty = Some((level, x >> level, y >> level));
                return false;
            }
        }
        ray.blocks(occ, x, y)
    };
    loop {
        let a = (2 * ix + 1) * ny;
        let b = (2 * iy + 1) * nx;
        if a == b {
            let side_x = check(x + stx, y);
            let side_y = check(x, y + sty);
            if side_x && side_y {
                return false;
            }
            x += stx;
            y += sty;
            ix += 1;
            iy += 1;
        } else if a < b {
            x += stx;
            ix += 1;
        } else {
            y += sty;
            iy += 1;
        }
        if ix == nx && iy == ny {
            return true;
        }
        if check(x, y) {
            return false;
        }
    }
}

/// Distance Field: sphere tracing from the source texel centre toward the
/// target centre, stepping by the distance to the nearest covered DF texel
/// less a margin of 1.5 DF texels (at least half a texel), optionally
/// jittered by a hash of the texel. On a covered texel the height test
/// decides. Soft shadows darken by `k * distance / travelled`. Returns the
/// light factor, mask scale.
pub(super) fn distance_field_march(ray: &Ray, occ: &Occlusion, rule: &RayRule) -> u16 {
    let (dfw, dfh, df) = (occ.distance_field.width, occ.distance_field.height, &occ.distance_field.texels);
    let scale = i64::from(rule.df_scale);
    let one = i64::from(TEXEL_ONE);
    let dxq = i64::from(ray.tx - ray.sx) * one;
    let dyq = i64::from(ray.ty - ray.sy) * one;
    let len = i64::from(isqrt((dxq * dxq + dyq * dyq) as u32));
    let (ox, oy) = (i64::from(ray.sx) * one + one / 2, i64::from(ray.sy) * one + one / 2);
    let mut travelled = 0i64;
    let mut light = i64::from(u16::MAX);
    let k_q8 = i64::from(rule.soft_shadow_k_q8);
    let jitter = i64::from(rule.df_jitter);
    while travelled < len {
        let px = ox + dxq * travelled / len;
        let py = oy + dyq * travelled / len;
        let (cx, cy) = ((px >> 3) as i32, (py >> 3) as i32);
        if (cx, cy) == (ray.tx, ray.ty) {
            break;
        }
        let (gx, gy) = (i64::from(cx).div_euclid(scale), i64::from(cy).div_euclid(scale));
        let d2 = if gx < 0 || gy < 0 || gx >= i64::from(dfw) || gy >= i64::from(dfh) { u32::MAX } else { df[(gy * i64::from(dfw) + gx) as usize] };
        let mut step;
        if d2 == 0 && (cx, cy) != (ray.sx, ray.sy) {
            if ray.blocks(occ, cx, cy) {
                return 0;
            }
            step = one / 2;
        } else {
            let dist = i64::from(isqrt(d2.min(1 << 30))) * scale * one;
            step = (dist - 3 * scale * one / 2).max(one / 2);
            if k_q8 > 0 && travelled > 0 && d2 > 0 {
                // The ratio saturates at 256 long before dist reaches 2^16;
                // the cap keeps the GPU twin's product inside 32 bits.
                let ratio = (k_q8 * dist.min(1 << 16) / travelled).min(256);
                light = light.min(ratio * 65535 / 256);
            }
        }
        if jitter > 0 {
            let h = i64::from(hash2(cx, cy) & 0xffff);
            let factor = 65536 - jitter + ((jitter * h) >> 15);
            // Any step of 4x the ray length ends the march even when jitter
            // halves it; the cap keeps the GPU twin's product inside 32 bits.
            step = ((step.min(4 * len) * (factor >> 4)) >> 12).max(1);
        }
        travelled += step;
    }
    light as u16
}
