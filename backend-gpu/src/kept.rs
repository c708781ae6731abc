//! An instance's occlusion as a rollback state keeps it on the device
//! (`keep.rs` makes and loads it; an instance remembers the copy it holds
//! unwritten).

/// An instance's occlusion, copied on the device: shared by the states
/// saved while the instance's occlusion did not change.
pub(crate) struct KeptOcclusion {
    pub(crate) coverage: wgpu::Buffer,
    pub(crate) height: wgpu::Buffer,
    /// The pyramid, its level table and the distance field, as built then.
    pub(crate) mips: wgpu::Buffer,
    pub(crate) mip_table: wgpu::Buffer,
    pub(crate) distance_field: wgpu::Buffer,
    pub(crate) mip_levels: u32,
    pub(crate) df_width: u32,
    pub(crate) df_height: u32,
}
