//! How many texels each tick changes, per texture and over all instances,
//! in tick rows of the `rts` workload: the work a tick's presentation
//! passes (blur, memory, compose, upscale, blend) cannot avoid, since each
//! of them redoes what changed. Set beside `rts-steady`, it tells how much
//! of a row's cost is more to present rather than slower to compute (four
//! team instances change about four times the visibility texels of one
//! instance with every source; an army on the move, about eight times).
//!
//! `cargo run --release -p murk-benches --example changed_texels [TICKS] ROW...`
//! (default 16 ticks, after 8 warm ones; rows by their bench names).

use murk_benches::ticks::{Change, RtsTicks};
use murk_core::{Texture, TextureData};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let ticks: usize = args.first().and_then(|a| a.parse().ok()).unwrap_or(16);
    let rows: Vec<Change> = args.iter().skip(1).filter_map(|n| Change::named(n).or_else(|| panic!("no row is named {n}"))).collect();
    if ticks == 0 || rows.is_empty() {
        let all: Vec<&str> = Change::ALL.iter().map(|c| c.label()).collect();
        eprintln!("give a tick count of at least 1 and rows among: {}", all.join(", "));
        std::process::exit(2);
    }
    let textures = [Texture::Visibility, Texture::Blur, Texture::Memory, Texture::Compose, Texture::Final];
    print!("{:>20}", "texels changed/tick");
    for t in textures {
        print!("  {:>10}", t.name());
    }
    println!();
    for change in rows {
        let mut t = RtsTicks::new(Box::new(murk_cpu::CpuBackend::new(2).expect("a pool")), change);
        for _ in 0..8 {
            t.step();
        }
        let names = t.fog.instance_names();
        let mut changed = [0usize; 5];
        let read = |t: &mut RtsTicks| -> Vec<Vec<TextureData>> {
            names.iter().map(|n| textures.iter().map(|&tex| t.fog.read_texture(n, tex).expect("a mask").data).collect()).collect()
        };
        let mut before = read(&mut t);
        for _ in 0..ticks {
            t.step();
            let after = read(&mut t);
            for (b, a) in before.iter().zip(&after) {
                for (k, (b, a)) in b.iter().zip(a).enumerate() {
                    let (TextureData::U16(b), TextureData::U16(a)) = (b, a) else { panic!("the masks are 16-bit") };
                    changed[k] += b.iter().zip(a).filter(|(x, y)| x != y).count();
                }
            }
            before = after;
        }
        print!("{:>20}", change.label());
        for c in changed {
            print!("  {:>10}", c / ticks);
        }
        println!();
    }
}
