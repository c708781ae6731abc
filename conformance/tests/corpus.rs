//! The goldens against the corpus: enough cases, no golden without a case,
//! and golden images that are the hashed masks. (The corpus against the
//! goldens runs case by case on every backend in the `backends` harness.)

use murk_conformance::harness::{case_files, case_name, goldens_dir, load_manifest};
use std::collections::BTreeSet;

#[test]
fn the_corpus_is_large_enough() {
    let cases = case_files();
    assert!(cases.len() >= 40, "{} cases", cases.len());
    let maps = cases.iter().filter(|p| std::fs::read_to_string(p).unwrap().contains("\"map\"")).count();
    assert!(maps >= 6, "{maps} cases on real maps");
}

#[test]
fn no_golden_lacks_a_case() {
    let manifest = load_manifest().unwrap();
    let cases: BTreeSet<String> = case_files().iter().map(|p| case_name(p)).collect();
    let in_manifest: BTreeSet<String> = manifest["cases"].as_object().unwrap().keys().cloned().collect();
    assert_eq!(in_manifest, cases, "manifest cases vs case files (run murk-bless)");
    let listed: BTreeSet<String> = manifest["cases"]
        .as_object()
        .unwrap()
        .values()
        .flat_map(|c| c["images"].as_array().unwrap().iter().map(|i| i.as_str().unwrap().to_string()))
        .collect();
    let mut on_disk = BTreeSet::new();
    for entry in std::fs::read_dir(goldens_dir()).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        if path.is_dir() {
            assert!(cases.contains(&name), "golden folder `{name}` has no case");
            for img in std::fs::read_dir(&path).unwrap() {
                on_disk.insert(format!("{name}/{}", img.unwrap().file_name().to_str().unwrap()));
            }
        } else {
            assert!(["manifest.json", "contact-sheet.png", "contact-sheet.html"].contains(&name.as_str()), "stray golden file `{name}`");
        }
    }
    assert_eq!(on_disk, listed, "golden images on disk vs in the manifest");
}

#[test]
fn golden_images_match_the_hashed_final_masks() {
    // The PNGs are what people review; they must be the masks the hashes cover.
    let manifest = load_manifest().unwrap();
    for (case, entry) in manifest["cases"].as_object().unwrap() {
        for img in entry["images"].as_array().unwrap() {
            let rel = img.as_str().unwrap();
            let (w, h, texels) = murk_conformance::harness::read_png16(&goldens_dir().join(rel)).unwrap();
            let file = rel.rsplit('/').next().unwrap();
            let mut parts = file.split('.');
            let (instance, tick) = (parts.next().unwrap(), parts.next().unwrap());
            let key = format!("{tick}/{instance}/final");
            let record = murk_conformance::harness::TextureRecord {
                tick: tick[1..].parse().unwrap(),
                instance: instance.into(),
                row: murk_core::Texture::Final.row(),
                image: murk_core::TextureImage { width: w, height: h, data: murk_core::TextureData::U16(texels) },
            };
            assert_eq!(entry["hashes"][&key].as_str().unwrap(), record.hash(), "{case}: {rel}");
        }
    }
}
