//! The mutations of the seeded random run: bytes (flips, boundary
//! values, cuts and repeats) and, for JSON seeds, structure (values
//! replaced, keys removed, array elements repeated or dropped).

/// A small deterministic generator (SplitMix64) for the seeded random runs.
pub struct Rng(pub u64);

impl Rng {
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// A number below `n` (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
    /// `n` random bytes.
    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next_u64() as u8).collect()
    }
}

/// A mutation of `seed`: a few bytes flipped, set to extremes, inserted,
/// removed, or a slice repeated; for snapshots, the checksum is fixed up by
/// the target itself.
pub fn mutate(seed: &[u8], rng: &mut Rng) -> Vec<u8> {
    let mut out = seed.to_vec();
    for _ in 0..1 + rng.below(4) {
        let len = out.len().max(1);
        match rng.below(6) {
            0 if !out.is_empty() => {
                let i = rng.below(len);
                out[i] ^= 1 << rng.below(8);
            }
            1 if !out.is_empty() => {
                let i = rng.below(len);
                out[i] = [0, 1, 0x7f, 0x80, 0xff][rng.below(5)];
            }
            2 => {
                let i = rng.below(len + 1).min(out.len());
                let n = 1 + rng.below(8);
                let b = rng.bytes(n);
                out.splice(i..i, b);
            }
            3 if !out.is_empty() => {
                let i = rng.below(len);
                let n = (1 + rng.below(8)).min(out.len() - i);
                out.drain(i..i + n);
            }
            4 if out.len() > 8 => {
                // A little-endian u32 or u64 field set to a boundary value.
                let i = rng.below(out.len() - 8);
                let v: u64 = [0, 1, u64::from(u32::MAX), u64::MAX, u64::MAX - 1, 1 << 40][rng.below(6)];
                let w = if rng.below(2) == 0 { 4 } else { 8 };
                out[i..i + w].copy_from_slice(&v.to_le_bytes()[..w]);
            }
            _ => {
                let i = rng.below(len + 1).min(out.len());
                out.truncate(i);
            }
        }
    }
    out
}

/// A structural mutation of a JSON seed: a few values replaced by
/// boundary values, keys removed, array elements repeated or dropped. The
/// result parses as JSON, so the scenario and profile checks (not only the
/// parser) are reached. `None` when the seed is not JSON.
pub fn mutate_json(seed: &[u8], rng: &mut Rng) -> Option<Vec<u8>> {
    let mut value: serde_json::Value = serde_json::from_slice(seed).ok()?;
    for _ in 0..1 + rng.below(3) {
        let mut count = 0;
        count_nodes(&value, &mut count);
        let target = rng.below(count.max(1));
        let mut at = 0;
        mutate_node(&mut value, target, &mut at, rng);
    }
    serde_json::to_vec(&value).ok()
}

fn count_nodes(v: &serde_json::Value, n: &mut usize) {
    *n += 1;
    match v {
        serde_json::Value::Array(a) => a.iter().for_each(|x| count_nodes(x, n)),
        serde_json::Value::Object(o) => o.values().for_each(|x| count_nodes(x, n)),
        _ => {}
    }
}

fn mutate_node(v: &mut serde_json::Value, target: usize, at: &mut usize, rng: &mut Rng) -> bool {
    use serde_json::Value;
    if *at == target {
        let boundary: [Value; 14] = [
            Value::from(0),
            Value::from(-1),
            Value::from(1),
            Value::from(u32::MAX),
            Value::from(1_000_001),
            Value::from(4096),
            Value::from(4097),
            Value::from(1.0e30),
            Value::from(-1.0e30),
            Value::from(1.0e-30),
            Value::from(4095.0625),
            Value::from(0.5),
            Value::from("x"),
            Value::Null,
        ];
        match v {
            Value::Array(a) if !a.is_empty() && rng.below(2) == 0 => {
                let i = rng.below(a.len());
                if rng.below(2) == 0 {
                    let copy = a[i].clone();
                    a.insert(i, copy);
                } else {
                    a.remove(i);
                }
            }
            Value::Object(o) if !o.is_empty() && rng.below(3) == 0 => {
                let key = o.keys().nth(rng.below(o.len())).cloned().unwrap_or_default();
                o.remove(&key);
            }
            _ => *v = boundary[rng.below(boundary.len())].clone(),
        }
        return true;
    }
    *at += 1;
    match v {
        Value::Array(a) => a.iter_mut().any(|x| mutate_node(x, target, at, rng)),
        Value::Object(o) => o.values_mut().any(|x| mutate_node(x, target, at, rng)),
        _ => false,
    }
}
