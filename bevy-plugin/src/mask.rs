//! Each instance's final mask as a Bevy [`Image`] (`Rgba16Float`, the
//! mask / 65535 in every colour channel, alpha 1, row 0 at the area's local
//! -Y edge: the layout of murk's GPU mask texture, which the WGSL include
//! samples).
//!
//! On the GPU backend running on Bevy's render device, the render world
//! copies murk's mask texture into the image's texture after each tick: a
//! device-side copy, nothing crosses to the CPU. On the CPU backend the
//! mask is read after the tick and uploaded only when its bytes changed.

use crate::fog::MurkFog;
use crate::set::MurkSet;
use bevy::asset::RenderAssetUsages;
use bevy::image::ImageSampler;
use bevy::prelude::*;
use bevy::render::extract_resource::{ExtractResource, ExtractResourcePlugin};
use bevy::render::render_asset::RenderAssets;
use bevy::render::renderer::{RenderDevice, RenderQueue};
use bevy::render::texture::GpuImage;
use bevy::render::{Render, RenderApp, RenderSystems};
use murk_core::ShaderParams;
use std::collections::BTreeMap;
use wgpu::{Extent3d, TextureDimension, TextureFormat, TextureUsages};

/// The images that hold each instance's final mask, and the parameters a
/// material needs to sample them (area, cutoff, explored value).
#[derive(Resource, Default, Clone, Debug)]
pub struct FogImages {
    /// The mask image of each instance, by name.
    pub images: BTreeMap<String, Handle<Image>>,
    /// The shader parameters of each instance, by name.
    pub params: BTreeMap<String, ShaderParams>,
    /// Last uploaded CPU masks (to upload only on change).
    uploaded: BTreeMap<String, Vec<u16>>,
    /// Set once when the GPU backend runs on a device Bevy does not render
    /// with (its textures cannot reach Bevy's images).
    warned_foreign_device: bool,
}

impl FogImages {
    /// The mask image of an instance.
    pub fn image(&self, name: &str) -> Option<&Handle<Image>> {
        self.images.get(name)
    }
}

/// Device-side copies for the render world: (image, murk's texture, tick).
#[derive(Resource, Clone, Default)]
struct FogTextureCopies(Vec<(AssetId<Image>, wgpu::Texture, u64)>);

impl ExtractResource<RenderApp> for FogTextureCopies {
    type Source = Self;
    fn extract_resource(source: &Self) -> Self {
        source.clone()
    }
}

fn mask_image(width: u32, height: u32, data: Option<Vec<u8>>) -> Image {
    let size = Extent3d { width, height, depth_or_array_layers: 1 };
    let mut image = Image::new_uninit(size, TextureDimension::D2, TextureFormat::Rgba16Float, RenderAssetUsages::default());
    image.data = data;
    image.texture_descriptor.usage = TextureUsages::TEXTURE_BINDING | TextureUsages::COPY_DST | TextureUsages::COPY_SRC;
    image.sampler = ImageSampler::linear();
    image
}

/// The texels of the GPU mask texture for a CPU mask: value / 65535 as
/// half floats in R, G and B, alpha 1.
pub fn mask_texels(mask: &[u16]) -> Vec<u8> {
    let one = half::f16::ONE.to_le_bytes();
    let mut out = Vec::with_capacity(mask.len() * 8);
    for &v in mask {
        let h = half::f16::from_f32(f32::from(v) / 65535.0).to_le_bytes();
        out.extend_from_slice(&h);
        out.extend_from_slice(&h);
        out.extend_from_slice(&h);
        out.extend_from_slice(&one);
    }
    out
}

fn update_images(
    mut fog: ResMut<MurkFog>,
    mut fog_images: ResMut<FogImages>,
    mut images: ResMut<Assets<Image>>,
    mut copies: Option<ResMut<FogTextureCopies>>,
) {
    let fog = &mut *fog;
    let ticks = fog.ticks();
    let names: Vec<String> = fog.instances().keys().cloned().collect();
    let fog_images = &mut *fog_images;
    fog_images.images.retain(|n, _| names.contains(n));
    fog_images.params.retain(|n, _| names.contains(n));
    fog_images.uploaded.retain(|n, _| names.contains(n));
    let gpu = fog.gpu().cloned();
    // murk's textures reach Bevy's images only on Bevy's device.
    let same_device = fog.on_render_device() && copies.is_some();
    if gpu.is_some() && !same_device && !fog_images.warned_foreign_device {
        warn!("murk runs on its own GPU device, not Bevy's: its mask images are read back and uploaded");
        fog_images.warned_foreign_device = true;
    }
    let mut wanted_copies = Vec::new();
    let Some(subsystem) = fog.subsystem() else { return };
    for name in names {
        let (Ok(dims), Ok(params)) = (subsystem.dims(&name), subsystem.shader_params(&name)) else { continue };
        if fog_images.params.get(&name) != Some(&params) {
            fog_images.params.insert(name.clone(), params);
        }
        let handle = fog_images.images.entry(name.clone()).or_insert_with(|| images.add(mask_image(dims.out_width, dims.out_height, None))).clone();
        if let Some(image) = images.get(&handle) {
            if image.width() != dims.out_width || image.height() != dims.out_height {
                // A new area or resolution: a new image of the new size.
                let _ = images.insert(&handle, mask_image(dims.out_width, dims.out_height, None));
                fog_images.uploaded.remove(&name);
            }
        }
        if let (Some(gpu), true) = (&gpu, same_device) {
            let Ok(key) = subsystem.instance_key(&name) else { continue };
            if let Ok(texture) = gpu.mask_texture(key) {
                wanted_copies.push((handle.id(), texture, ticks));
            }
            continue;
        }
        let Ok(mask) = subsystem.final_mask(&name) else { continue };
        if fog_images.uploaded.get(&name) != Some(&mask) {
            if let Some(mut image) = images.get_mut(&handle) {
                image.data = Some(mask_texels(&mask));
            }
            fog_images.uploaded.insert(name, mask);
        }
    }
    if let Some(copies) = copies.as_mut() {
        if copies.0.len() != wanted_copies.len() || copies.0.iter().zip(&wanted_copies).any(|(a, b)| a.0 != b.0 || a.1 != b.1 || a.2 != b.2) {
            copies.0 = wanted_copies;
        }
    }
}

/// Copies murk's mask textures into the images' textures on the device,
/// once per tick, before the frame's render passes.
fn copy_textures(
    copies: Res<FogTextureCopies>,
    gpu_images: Res<RenderAssets<GpuImage>>,
    device: Res<RenderDevice>,
    queue: Res<RenderQueue>,
    mut done: Local<BTreeMap<AssetId<Image>, (u64, wgpu::Texture)>>,
) {
    let mut encoder = None;
    for (id, source, tick) in &copies.0 {
        let Some(target) = gpu_images.get(*id) else { continue };
        let target_texture: &wgpu::Texture = &target.texture;
        if done.get(id).is_some_and(|(t, tex)| t == tick && tex == target_texture) {
            continue;
        }
        if source.size() != target_texture.size() {
            continue;
        }
        let enc = encoder.get_or_insert_with(|| device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("murk mask copies") }));
        enc.copy_texture_to_texture(source.as_image_copy(), target_texture.as_image_copy(), source.size());
        done.insert(*id, (*tick, target_texture.clone()));
    }
    if let Some(enc) = encoder {
        queue.submit([enc.finish()]);
    }
    done.retain(|id, _| copies.0.iter().any(|(i, _, _)| i == id));
}

pub(crate) fn build(app: &mut App) {
    if app.world().contains_resource::<Assets<Image>>() {
        app.add_systems(FixedUpdate, update_images.in_set(MurkSet::Publish).after(crate::mirror::publish_entities));
    }
    if app.get_sub_app(RenderApp).is_some() {
        app.init_resource::<FogTextureCopies>().add_plugins(ExtractResourcePlugin::<FogTextureCopies>::default());
    }
}

pub(crate) fn finish(app: &mut App) {
    if let Some(render_app) = app.get_sub_app_mut(RenderApp) {
        render_app.add_systems(Render, copy_textures.in_set(RenderSystems::PrepareResources));
    }
}
