//! The set of every texture of one instance, checked against the table
//! before any backend sees it: what a restore, a resample or a rollback
//! hands a backend to load, and what a snapshot saves.

use super::image::{Grid, TextureImage};
use super::table::{instance_textures, InstanceDims, OcclusionBuild, Texture};
use super::texel::{Texel, TexelKind, TextureData};
use super::tiles::TiledImage;
use crate::error::{MurkError, Result};
use crate::fixed::{HEIGHT_LIMIT, HEIGHT_WALL};
use std::any::Any;
use std::sync::{Arc, OnceLock};

/// What a backend knows of an instance's textures beyond their texels
/// (which blocks may still move, how the blurred visibility was made),
/// saved with a rollback state ([`crate::Backend::save_notes`]) and handed
/// back with the state's [`TextureSet`], so that the first tick after a
/// load redoes only what the load changed. Only the backend that wrote it
/// reads it (by its own type); any other ignores it.
#[derive(Clone)]
pub struct BackendNotes(pub Arc<dyn Any + Send + Sync>);

impl std::fmt::Debug for BackendNotes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BackendNotes")
    }
}

/// Every texture of one instance copied where a backend computes (a GPU's
/// device) for a rollback state ([`crate::Backend::keep_textures`]):
/// copies made there and never read back. Only the backend that made them
/// loads them (by its own type, [`crate::Backend::load_kept`]).
#[derive(Clone)]
pub struct KeptTextures(pub Arc<dyn Any + Send + Sync>);

impl std::fmt::Debug for KeptTextures {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("KeptTextures")
    }
}

/// Every texture of one instance, checked against [`instance_textures`]:
/// what a backend is given to load (a restore, a resample, a rollback) and
/// what a snapshot saves. The images are shared: a set made from a kept
/// rollback state ([`TextureSet::tiled`]) copies none of them.
#[derive(Clone, Debug)]
pub struct TextureSet {
    build: Option<OcclusionBuild>,
    textures: Vec<(Texture, SetImage)>,
    notes: Option<BackendNotes>,
}

/// One texture of a [`TextureSet`]: a whole image, or the tiles of a
/// rollback state (put together only when a backend asks for the whole).
#[derive(Clone, Debug)]
enum SetImage {
    Whole(Arc<TextureImage>),
    Tiled(Arc<TiledImage>, OnceLock<TextureImage>),
}

impl SetImage {
    fn whole(&self) -> &TextureImage {
        match self {
            SetImage::Whole(img) => img,
            SetImage::Tiled(tiles, whole) => whole.get_or_init(|| tiles.to_image()),
        }
    }

    fn size(&self) -> (u32, u32) {
        match self {
            SetImage::Whole(img) => (img.width, img.height),
            SetImage::Tiled(t, _) => (t.width, t.height),
        }
    }
}

impl TextureSet {
    /// Checks `textures` against the list of an instance of `dims` after
    /// `build`: every texture once, in order, of its size and type, and the
    /// occlusion within range (coverage and mips 0 or 1, heights within the
    /// height range). Errors name the texture under `prefix`.
    pub fn new(dims: InstanceDims, build: Option<OcclusionBuild>, textures: Vec<(Texture, TextureImage)>, prefix: &str) -> Result<Self> {
        let textures = textures.into_iter().map(|(t, img)| (t, SetImage::Whole(Arc::new(img)))).collect();
        Self::checked(dims, build, textures, prefix)
    }

    /// [`TextureSet::new`] of textures held as tiles (a rollback state's),
    /// with the same checks of names, sizes and texel types; each tile must
    /// be of its place's size. The tiles' versions and the occlusion's
    /// texels are taken on the backend's word, not checked: a set of tiles
    /// comes from [`crate::Backend::save_tiles`] of this process, which read
    /// them from occlusion it built from checked inputs (a tile under a
    /// version the instance's tile has is not written, and a rollback's
    /// load does not read megabytes of heights it made itself).
    pub fn tiled(dims: InstanceDims, build: Option<OcclusionBuild>, textures: Vec<(Texture, Arc<TiledImage>)>, prefix: &str) -> Result<Self> {
        let textures = textures.into_iter().map(|(t, img)| (t, SetImage::Tiled(img, OnceLock::new()))).collect();
        Self::checked(dims, build, textures, prefix)
    }

    fn checked(dims: InstanceDims, build: Option<OcclusionBuild>, textures: Vec<(Texture, SetImage)>, prefix: &str) -> Result<Self> {
        let expected = instance_textures(dims, build);
        let listed: Vec<String> = textures.iter().map(|(t, _)| t.name()).collect();
        let wanted: Vec<String> = expected.iter().map(|s| s.texture.name()).collect();
        if listed != wanted {
            return Err(MurkError::invalid(
                format!("{prefix}.textures"),
                listed.join(", "),
                format!("must be exactly {} for its size and occlusion build", wanted.join(", ")),
            ));
        }
        for ((texture, img), entry) in textures.iter().zip(&expected) {
            let field = format!("{prefix}.textures.{}", texture.name());
            let want = texture.kind();
            let (size, found) = match img {
                SetImage::Whole(img) => {
                    let count_ok = img.data.len() as u64 == u64::from(img.width) * u64::from(img.height);
                    let found = format!("{}x{} of {} {} texels", img.width, img.height, img.data.len(), img.data.kind().name());
                    ((img.width, img.height, count_ok.then_some(img.data.kind())), found)
                }
                SetImage::Tiled(t, _) => {
                    let kind = if t.fits() { t.kind().or(Some(want)) } else { None };
                    let (tiles, versions, kind_name) = (t.tiles.len(), t.versions.len(), t.kind().map_or("no", TexelKind::name));
                    let found = format!("{}x{} in {tiles} tiles ({versions} versions) of {kind_name}", t.width, t.height);
                    ((t.width, t.height, kind), found)
                }
            };
            if size != (entry.width, entry.height, Some(want)) {
                return Err(MurkError::invalid(field, found, format!("must be {}x{} of {}", entry.width, entry.height, want.name())));
            }
            if let Some((at, v, range)) = out_of_range(img) {
                return Err(MurkError::invalid(format!("{field}[{at}]"), v, format!("must be {range}")));
            }
        }
        Ok(Self { build, textures, notes: None })
    }

    /// The set with the notes the backend saved beside its textures (a
    /// rollback state's).
    pub fn with_notes(self, notes: Option<BackendNotes>) -> Self {
        Self { notes, ..self }
    }

    /// The notes the backend saved beside these textures, if any.
    pub fn notes(&self) -> Option<&BackendNotes> {
        self.notes.as_ref()
    }

    /// The occlusion build the set was checked for.
    pub fn build(&self) -> Option<OcclusionBuild> {
        self.build
    }

    /// Every texture, in order (tiles put together).
    pub fn textures(&self) -> impl Iterator<Item = (Texture, &TextureImage)> {
        self.textures.iter().map(|(t, img)| (*t, img.whole()))
    }

    /// Every texture, in order, with its width and height.
    pub fn sizes(&self) -> impl Iterator<Item = (Texture, (u32, u32))> + '_ {
        self.textures.iter().map(|(t, img)| (*t, img.size()))
    }

    /// One texture of the set (its tiles put together).
    pub fn get(&self, texture: Texture) -> Option<&TextureImage> {
        self.textures().find(|(t, _)| *t == texture).map(|(_, img)| img)
    }

    /// The tiles of one texture, when the set was made of tiles.
    pub fn tiles(&self, texture: Texture) -> Option<&Arc<TiledImage>> {
        self.textures.iter().find(|(t, _)| *t == texture).and_then(|(_, img)| match img {
            SetImage::Tiled(tiles, _) => Some(tiles),
            SetImage::Whole(_) => None,
        })
    }

    /// One texture of the set as a grid of its type.
    pub fn grid<T: Texel>(&self, texture: Texture) -> Option<Grid<T>> {
        self.get(texture).and_then(Grid::from_image)
    }

    /// The pyramid levels, level 1 first (empty when none was built).
    pub fn mips(&self) -> Vec<Grid<u8>> {
        self.textures().filter(|(t, _)| matches!(t, Texture::Mip(_))).filter_map(|(_, img)| Grid::from_image(img)).collect()
    }
}

/// The first texel of an occlusion texture held whole out of its range,
/// as (index, value, the range); masks have none, and tiles are a
/// backend's own (see [`TextureSet::tiled`]).
fn out_of_range(img: &SetImage) -> Option<(usize, i64, String)> {
    let SetImage::Whole(img) = img else { return None };
    match &img.data {
        TextureData::U8(v) => first_bad(v, |x| x > 1).map(|i| (i, i64::from(v[i]), "0 or 1".to_string())),
        TextureData::I32(v) => {
            first_bad(v, |x| !(-HEIGHT_LIMIT..=HEIGHT_WALL).contains(&x)).map(|i| (i, i64::from(v[i]), format!("-{HEIGHT_LIMIT}..={HEIGHT_WALL}")))
        }
        _ => None,
    }
}

/// The first index of `v` where `bad` holds. Each run of texels is first
/// folded without a branch (which the compiler turns into lanes: a
/// restore checks every texel of the occlusion of a snapshot), and
/// searched only where one is bad.
fn first_bad<T: Copy>(v: &[T], bad: impl Fn(T) -> bool) -> Option<usize> {
    const RUN: usize = 1024;
    v.chunks(RUN)
        .enumerate()
        .find(|(_, run)| run.iter().fold(false, |any, &x| any | bad(x)))
        .and_then(|(k, run)| run.iter().position(|&x| bad(x)).map(|i| k * RUN + i))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::texture::texel::TileData;
    use crate::texture::{TexelRect, TILE};

    fn dims() -> InstanceDims {
        InstanceDims { width: 5, height: 3, out_width: 10, out_height: 6 }
    }

    fn full_set(build: Option<OcclusionBuild>) -> Vec<(Texture, TextureImage)> {
        instance_textures(dims(), build)
            .into_iter()
            .map(|s| {
                let n = (s.width * s.height) as usize;
                (s.texture, TextureImage { width: s.width, height: s.height, data: TextureData::zeros(s.texture.kind(), n) })
            })
            .collect()
    }

    /// Tiles cut at the edges put back together give the image; a load
    /// writes all but the tiles it is told to skip; a set of tiles is
    /// checked for its names, sizes and types as a set of images is.
    #[test]
    fn tiles_join_back_and_a_tiled_set_is_checked() {
        let (w, h) = (TILE * 2 + 3, TILE + 5);
        let texels: Vec<u16> = (0..w * h).map(|i| (i * 7) as u16).collect();
        let image = TextureImage { width: w, height: h, data: TextureData::U16(texels.clone()) };
        let tiled = TiledImage::split(&image);
        assert_eq!(tiled.tiles.len(), 6);
        assert!(tiled.fits());
        assert_eq!(tiled.to_image(), image);
        assert_eq!(tiled.tiles.iter().map(TileData::bytes).sum::<usize>(), texels.len() * 2);
        let mut out = vec![0u16; texels.len()];
        assert!(tiled.write_into(&mut out, |i| i == 4));
        for (i, (&got, &want)) in out.iter().zip(&texels).enumerate() {
            let (x, y) = (i as u32 % w, i as u32 / w);
            let skipped = (x / TILE, y / TILE) == (1, 1);
            assert_eq!(got, if skipped { 0 } else { want }, "texel ({x}, {y})");
        }
        assert!(!tiled.write_into(&mut vec![0u8; texels.len()], |_| false), "a grid of another type");
        let mut short = tiled.clone();
        Arc::make_mut(&mut short.tiles)[5] = TileData::U16(Arc::from(&[1u16][..]));
        assert!(!short.fits());
        let mut unversioned = tiled.clone();
        unversioned.versions.pop();
        assert!(!unversioned.fits(), "a tile without its version");

        let sets = |edit: &dyn Fn(&mut TiledImage)| {
            let images = full_set(None).into_iter().map(|(t, img)| {
                let mut tiles = TiledImage::split(&img);
                if t == Texture::Height {
                    edit(&mut tiles);
                }
                (t, Arc::new(tiles))
            });
            TextureSet::tiled(dims(), None, images.collect(), "s")
        };
        let set = sets(&|_| {}).unwrap();
        assert_eq!(set.get(Texture::Final).map(|i| (i.width, i.height)), Some((10, 6)));
        assert!(set.tiles(Texture::Final).is_some());
        let e = sets(&|t| (t.tiles, t.versions) = (Arc::from([]), Vec::new())).unwrap_err().to_string();
        assert!(e.contains("s.textures.height = 5x3 in 0 tiles (0 versions)"), "{e}");
        let e = sets(&|t| t.versions.push(0)).unwrap_err().to_string();
        assert!(e.contains("s.textures.height = 5x3 in 1 tiles (2 versions)"), "{e}");
    }

    /// A write that reports what it changed gives the bytes of a plain
    /// write, and per row of a tile written the span from the first to the
    /// last texel that took a new value: none where the grid held the
    /// tile's texels already, none in a skipped tile.
    #[test]
    fn a_write_names_the_spans_it_changed() {
        let (w, h) = (TILE * 2 + 3, TILE + 5);
        let held: Vec<u16> = (0..w * h).map(|i| (i * 7) as u16).collect();
        let mut next = held.clone();
        // Row 3: texels 2 and 40 (two tiles); row 36 (the cut last row of
        // tiles): texel 65 alone; row 10: texel 40 of the skipped tile 1.
        for (x, y) in [(2, 3), (40, 3), (65, 36), (40, 10)] {
            next[(y * w + x) as usize] ^= 0x5a5a;
        }
        let tiled = TiledImage::split(&TextureImage { width: w, height: h, data: TextureData::U16(next.clone()) });
        let (mut plain, mut grid) = (held.clone(), held.clone());
        assert!(tiled.write_into(&mut plain, |_| false));
        let spans = tiled.write_changes_into(&mut grid, |_| false).expect("tiles of its type and size");
        assert_eq!(grid, plain);
        assert_eq!(grid, next);
        let rect = |x0, y0, x1| TexelRect { x0, y0, x1, y1: y0 + 1 };
        assert_eq!(spans, vec![rect(2, 3, 3), rect(40, 3, 41), rect(40, 10, 41), rect(65, 36, 66)]);
        // Written again: nothing changes. With tile 1 skipped, its texel
        // stays as held.
        assert_eq!(tiled.write_changes_into(&mut grid, |_| false), Some(Vec::new()));
        let mut grid = held.clone();
        let spans = tiled.write_changes_into(&mut grid, |i| i == 1).expect("tiles of its type and size");
        assert_eq!(spans, vec![rect(2, 3, 3), rect(65, 36, 66)]);
        assert_eq!(grid[(3 * w + 40) as usize], held[(3 * w + 40) as usize]);
        // Two texels apart in one row: one span over both.
        let mut grid = next.clone();
        grid[(5 * w + 4) as usize] ^= 1;
        grid[(5 * w + 9) as usize] ^= 1;
        assert_eq!(tiled.write_changes_into(&mut grid, |_| false), Some(vec![rect(4, 5, 10)]));
        assert_eq!(tiled.write_changes_into(&mut vec![0u8; held.len()], |_| false), None, "a grid of another type");
    }

    /// The folded search finds the first bad texel past its runs' edges.
    #[test]
    fn the_first_bad_texel_is_found_in_any_run() {
        let mut v = vec![0i32; 5000];
        assert_eq!(first_bad(&v, |x| x > 0), None);
        for at in [0, 1023, 1024, 3001, 4999] {
            v.fill(0);
            v[at] = 7;
            v[4999.min(at + 2000)] = 9;
            assert_eq!(first_bad(&v, |x| x > 0), Some(at), "bad at {at}");
        }
    }

    #[test]
    fn a_set_is_checked_texture_by_texture() {
        let build = Some(OcclusionBuild { mips: true, distance_field_scale: 1 });
        let set = TextureSet::new(dims(), build, full_set(build), "t").unwrap();
        assert_eq!(set.mips().len(), 3);
        assert_eq!(set.grid::<u16>(Texture::Final).map(|g| (g.width, g.height)), Some((10, 6)));
        assert_eq!(set.grid::<u8>(Texture::Final), None);

        let e = TextureSet::new(dims(), None, full_set(build), "t").unwrap_err().to_string();
        assert!(e.contains("t.textures = coverage, height, mip1"), "{e}");

        let mut wrong_type = full_set(None);
        wrong_type[0].1.data = TextureData::U16(vec![0; 15]);
        let e = TextureSet::new(dims(), None, wrong_type, "t").unwrap_err().to_string();
        assert!(e.contains("t.textures.coverage = 5x3 of 15 u16 texels: must be 5x3 of u8"), "{e}");

        let mut short = full_set(None);
        short[3].1.data = TextureData::U16(vec![0; 14]);
        let e = TextureSet::new(dims(), None, short, "t").unwrap_err().to_string();
        assert!(e.contains("t.textures.visibility = 5x3 of 14 u16 texels"), "{e}");

        let mut tall = full_set(None);
        tall[1].1.data = TextureData::I32(vec![HEIGHT_WALL + 1; 15]);
        let e = TextureSet::new(dims(), None, tall, "t").unwrap_err().to_string();
        assert!(e.contains("t.textures.height[0]"), "{e}");
    }
}
