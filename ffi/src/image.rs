//! How the C API describes a texture read into the caller's buffer: its
//! size and texel type.

/// Texels of `uint8_t` (coverage, the mips atlas).
pub const MURK_TEXEL_U8: u32 = 1;
/// Texels of `uint16_t` (the masks: visibility, blur, memory, mapped,
/// compose, upscale, final; 0 unseen, 65535 fully visible).
pub const MURK_TEXEL_U16: u32 = 2;
/// Texels of `int32_t` (height units).
pub const MURK_TEXEL_I32: u32 = 3;
/// Texels of `uint32_t` (squared distances).
pub const MURK_TEXEL_U32: u32 = 4;

/// The size and texel type of a stage read by `murk_read_stage`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MurkImageInfo {
    /// Width in texels.
    pub width: u32,
    /// Height in texels (rows; row 0 lies at the area's -Y edge).
    pub height: u32,
    /// `MURK_TEXEL_U8`, `MURK_TEXEL_U16`, `MURK_TEXEL_I32` or `MURK_TEXEL_U32`.
    pub texel_type: u32,
    /// Bytes per texel.
    pub texel_bytes: u32,
}
