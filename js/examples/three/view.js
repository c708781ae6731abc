// Drawing with three.js (presentation only; the judge is the hash): the
// map's terrain, the fog mask as a texture on it (three states: clear where
// visible, a haze where explored, dark where never seen), the 3D fog
// surface (a sheet above the ground whose vertices sink to it where the
// ground is known, as murk's "surface" look does), and the units.
//
// One renderer, three's WebGPURenderer, with node materials that sample
// the mask in both the vertex and the fragment stage:
// - on murk's GPU backend it renders on murk's own WebGPU device
//   (`fog.device`) and samples murk's mask texture there
//   (`fog.maskTexture(name)` as an `ExternalTexture`): nothing is read back;
// - on the CPU backend it runs on three's WebGL 2 backend and samples a
//   `DataTexture` filled from `fog.finalMask(name)`, the `Uint16Array`.
import * as THREE from 'three/webgpu';
import { attribute, clamp, float, max, mix, positionLocal, select, smoothstep, texture, uniform, uv, vec3 } from 'three/tsl';

const WALL = 6;
// The fog sheet's height where the ground is unknown, and how far below the
// ground it sinks where it is known.
const SHEET_TOP = 8;
const SHEET_SINK = 1.5;

/** Terrain heights per map cell: walls tall, trees `treeHeight`, ground 0. */
function heights(mapText, treeHeight) {
  const lines = mapText.split(/\r?\n/);
  const width = Number(lines.find((l) => l.startsWith('width')).split(/\s+/)[1]);
  const height = Number(lines.find((l) => l.startsWith('height')).split(/\s+/)[1]);
  const first = lines.indexOf('map') + 1;
  const h = new Float32Array(width * height);
  for (let r = 0; r < height; r++) {
    const row = lines[first + r];
    for (let c = 0; c < width; c++) h[r * width + c] = row[c] === '@' || row[c] === 'O' ? WALL : row[c] === 'T' ? treeHeight : 0;
  }
  return { width, height, h };
}

/** A grid of `nx` x `ny` vertices over the rectangle `x0..x0+sx`, `y0..y0+sy`; uv 0..1 from its -X, -Y corner. */
function grid(nx, ny, x0, y0, sx, sy, z) {
  const position = new Float32Array(nx * ny * 3);
  const uvs = new Float32Array(nx * ny * 2);
  for (let j = 0; j < ny; j++) {
    for (let i = 0; i < nx; i++) {
      const k = j * nx + i;
      const [u, v] = [i / (nx - 1), j / (ny - 1)];
      position.set([x0 + u * sx, y0 + v * sy, z(i, j)], k * 3);
      uvs.set([u, v], k * 2);
    }
  }
  const index = [];
  for (let j = 0; j + 1 < ny; j++) {
    for (let i = 0; i + 1 < nx; i++) {
      const a = j * nx + i;
      index.push(a, a + 1, a + nx, a + 1, a + nx + 1, a + nx);
    }
  }
  const geometry = new THREE.BufferGeometry();
  geometry.setAttribute('position', new THREE.BufferAttribute(position, 3));
  geometry.setAttribute('uv', new THREE.BufferAttribute(uvs, 2));
  geometry.setIndex(index);
  return geometry;
}

/** The scene: terrain, fog texture, fog surface, units. */
export class View {
  /**
   * `fog` is a murk-fog `Fog`; on the GPU backend the renderer shares its
   * device and samples its mask texture of `instance`.
   */
  static async create(canvas, fog, instance, mapText, treeHeight) {
    const onGpu = fog.onGpu;
    const renderer = new THREE.WebGPURenderer(onGpu ? { canvas, device: fog.device } : { canvas, forceWebGL: true });
    renderer.setSize(canvas.width, canvas.height, false);
    await renderer.init();
    let mask;
    if (onGpu) {
      mask = new THREE.ExternalTexture(fog.maskTexture(instance.name));
    } else {
      mask = new THREE.DataTexture(new Uint16Array(1), 1, 1, THREE.RedFormat, THREE.HalfFloatType);
    }
    mask.magFilter = THREE.LinearFilter;
    mask.minFilter = THREE.LinearFilter;
    return new View(renderer, mask, onGpu, fog.maskParams(instance.name), instance, mapText, treeHeight);
  }

  constructor(renderer, mask, onGpu, params, instance, mapText, treeHeight) {
    this.renderer = renderer;
    this.mask = mask;
    this.onGpu = onGpu;
    this.backend = renderer.backend.isWebGPUBackend ? 'WebGPU' : 'WebGL 2';
    this.scene = new THREE.Scene();
    this.scene.background = new THREE.Color(0x0b0d14);
    const [cx, cy] = instance.area.center;
    const [sx, sy] = instance.area.extents;
    const canvas = renderer.domElement;
    this.camera = new THREE.PerspectiveCamera(45, canvas.width / canvas.height, 1, 1000);
    this.camera.up.set(0, 0, 1);
    this.camera.position.set(cx, cy - sy * 1.05, sy * 0.95);
    this.camera.lookAt(cx, cy + sy * 0.05, 0);
    this.scene.add(new THREE.AmbientLight(0xffffff, 0.35));
    const sun = new THREE.DirectionalLight(0xffffff, 1.1);
    sun.position.set(cx - 80, cy - 120, 200);
    this.scene.add(sun);

    // The mask value under a vertex or fragment, and the three states.
    const x0 = cx - sx / 2;
    const y0 = cy - sy / 2;
    const explored = max(uniform(params.exploredValue), 1e-4);
    const value = texture(mask, uv()).r;

    // Terrain: one vertex per map cell centre, coloured by what grows there.
    const ground = heights(mapText, treeHeight);
    const { width, height, h } = ground;
    const at = (i, j) => h[j * width + i];
    const terrain = grid(width, height, 0.5, 0.5, width - 1, height - 1, at);
    const colours = new Float32Array(width * height * 3);
    for (let k = 0; k < width * height; k++) colours.set(h[k] > 5 ? [0.55, 0.52, 0.48] : h[k] > 1 ? [0.2, 0.45, 0.18] : [0.62, 0.66, 0.44], k * 3);
    terrain.setAttribute('ground', new THREE.BufferAttribute(colours, 3));
    // uv over the instance's area (the mask's row 0 at its -Y edge).
    const tuv = terrain.attributes.uv;
    const tpos = terrain.attributes.position;
    for (let k = 0; k < tpos.count; k++) tuv.setXY(k, (tpos.getX(k) - x0) / sx, (tpos.getY(k) - y0) / sy);
    terrain.computeVertexNormals();
    const haze = 0.45;
    const dark = 0.92;
    const t = clamp(value.div(explored), 0, 1);
    const opacity = select(
      value.greaterThanEqual(explored),
      float(haze).mul(float(1).sub(clamp(value.sub(explored).div(max(float(1).sub(explored), 1e-4)), 0, 1))),
      float(dark).add(float(haze - dark).mul(t.mul(t))),
    );
    const terrainMaterial = new THREE.MeshLambertNodeMaterial();
    terrainMaterial.colorNode = mix(attribute('ground', 'vec3'), vec3(0.03, 0.04, 0.08), opacity);
    this.scene.add(new THREE.Mesh(terrain, terrainMaterial));

    // The fog surface: at SHEET_TOP where the ground is unknown, sinking
    // below the ground (smoothstep of the mask over the explored value).
    const cells = 97;
    const groundUnder = (i, j) => {
      const c = Math.min(width - 1, Math.floor((i / (cells - 1)) * sx + x0));
      const r = Math.min(height - 1, Math.floor((j / (cells - 1)) * sy + y0));
      return h[Math.max(0, r) * width + Math.max(0, c)];
    };
    const surface = grid(cells, cells, x0, y0, sx, sy, groundUnder);
    const surfaceGround = new Float32Array(cells * cells);
    for (let k = 0; k < surfaceGround.length; k++) surfaceGround[k] = surface.attributes.position.getZ(k);
    surface.setAttribute('groundHeight', new THREE.BufferAttribute(surfaceGround, 1));
    const known = clamp(texture(mask, uv()).level(0).r.div(explored), 0, 1);
    const drop = smoothstep(0, 1, known);
    const surfaceMaterial = new THREE.MeshBasicNodeMaterial({ transparent: true, side: THREE.DoubleSide, depthWrite: false });
    surfaceMaterial.positionNode = vec3(positionLocal.x, positionLocal.y, mix(float(SHEET_TOP), attribute('groundHeight', 'float').sub(SHEET_SINK), drop));
    surfaceMaterial.colorNode = vec3(0.2, 0.23, 0.36);
    surfaceMaterial.opacityNode = float(0.7).mul(float(1).sub(drop));
    this.scene.add(new THREE.Mesh(surface, surfaceMaterial));

    this.units = new Map();
    this.unitGeometry = new THREE.ConeGeometry(1.6, 5, 12).rotateX(Math.PI / 2).translate(0, 0, 2.5);
    this.unitMaterial = new THREE.MeshLambertNodeMaterial({ color: 0xffb43a, emissive: 0x442200 });
  }

  /** CPU: takes the final mask (`{ width, height, texels }`) into the texture (as half floats, 0..1). */
  setMask({ width, height, texels }) {
    const half = new Uint16Array(width * height);
    for (let i = 0; i < half.length; i++) half[i] = THREE.DataUtils.toHalfFloat(texels[i] / 65535);
    this.mask.image = { data: half, width, height };
    this.mask.needsUpdate = true;
  }

  /** Puts a marker on each unit (`{ id, position }`), removing the ones gone. */
  setUnits(units) {
    const seen = new Set();
    for (const u of units) {
      seen.add(u.id);
      let mesh = this.units.get(u.id);
      if (!mesh) {
        mesh = new THREE.Mesh(this.unitGeometry, this.unitMaterial);
        this.units.set(u.id, mesh);
        this.scene.add(mesh);
      }
      mesh.position.set(u.position[0], u.position[1], u.position[2]);
    }
    for (const [id, mesh] of this.units) {
      if (!seen.has(id)) {
        this.scene.remove(mesh);
        this.units.delete(id);
      }
    }
  }

  draw() {
    this.renderer.render(this.scene, this.camera);
  }
}
