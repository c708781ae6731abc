// Drawing with three.js (presentation only; the judge is the hash): the
// map's terrain, the fog mask as a texture on it (three states: clear where
// visible, a haze where explored, dark where never seen), the 3D fog
// surface (a sheet above the ground that sinks to it where the ground is
// known, as murk's "surface" look does), and the units.
import * as THREE from 'three';

const WALL = 6;

/** Terrain heights per map cell: walls tall, trees `treeHeight`, ground 0. */
function heights(mapText, treeHeight) {
  const lines = mapText.split(/\r?\n/);
  const width = Number(lines.find((l) => l.startsWith('width')).split(/\s+/)[1]);
  const height = Number(lines.find((l) => l.startsWith('height')).split(/\s+/)[1]);
  const rows = lines.slice(lines.indexOf('map') + 1, lines.indexOf('map') + 1 + height);
  const h = new Float32Array(width * height);
  rows.forEach((row, r) => {
    for (let c = 0; c < width; c++) {
      const ch = row[c];
      h[r * width + c] = ch === '@' || ch === 'O' ? WALL : ch === 'T' ? treeHeight : 0;
    }
  });
  return { width, height, h };
}

const TERRAIN_VERTEX = /* glsl */ `
  varying vec2 vUv;
  varying float vHeight;
  void main() {
    vUv = uv;
    vHeight = position.z;
    gl_Position = projectionMatrix * modelViewMatrix * vec4(position, 1.0);
  }
`;

// The three-state composite of the page's overlay: clear where visible,
// a haze where explored, dark where never seen.
const TERRAIN_FRAGMENT = /* glsl */ `
  uniform sampler2D fog;
  uniform float explored;
  varying vec2 vUv;
  varying float vHeight;
  void main() {
    float v = texture2D(fog, vUv).r;
    float e = max(explored, 1e-4);
    float haze = 0.45, dark = 0.92;
    float t = clamp(v / e, 0.0, 1.0);
    float opacity = v >= e ? haze * (1.0 - clamp((v - e) / max(1.0 - e, 1e-4), 0.0, 1.0)) : dark + (haze - dark) * t * t;
    vec3 ground = vHeight > 5.0 ? vec3(0.55, 0.52, 0.48) : vHeight > 1.0 ? vec3(0.20, 0.45, 0.18) : vec3(0.62, 0.66, 0.44);
    gl_FragColor = vec4(mix(ground, vec3(0.03, 0.04, 0.08), opacity), 1.0);
  }
`;

/** The scene: terrain, fog texture, fog surface, units. */
export class View {
  constructor(canvas, mapText, { treeHeight, exploredValue, area }) {
    this.renderer = new THREE.WebGLRenderer({ canvas, antialias: false, preserveDrawingBuffer: true });
    this.renderer.setSize(canvas.width, canvas.height, false);
    this.scene = new THREE.Scene();
    this.scene.background = new THREE.Color(0x0b0d14);
    const [cx, cy] = area.center;
    const [sx, sy] = area.extents;
    this.area = { cx, cy, sx, sy };
    this.camera = new THREE.PerspectiveCamera(45, canvas.width / canvas.height, 1, 1000);
    this.camera.up.set(0, 0, 1);
    this.camera.position.set(cx, cy - sy * 1.05, sy * 0.95);
    this.camera.lookAt(cx, cy + sy * 0.05, 0);
    this.scene.add(new THREE.AmbientLight(0xffffff, 0.35));
    const sun = new THREE.DirectionalLight(0xffffff, 1.1);
    sun.position.set(cx - 80, cy - 120, 200);
    this.scene.add(sun);

    // Terrain: one vertex per map cell centre, heights from the map.
    const { width, height, h } = heights(mapText, treeHeight);
    this.ground = { width, height, h };
    const terrain = new THREE.PlaneGeometry(width, height, width - 1, height - 1);
    const pos = terrain.attributes.position;
    for (let i = 0; i < pos.count; i++) {
      // PlaneGeometry's rows run from +Y down; map row r is world y = r.
      const c = i % width;
      const r = height - 1 - Math.floor(i / width);
      pos.setXYZ(i, c + 0.5, r + 0.5, h[r * width + c]);
    }
    terrain.computeVertexNormals();

    // The fog mask as a texture, 8 bits of the 16 (presentation).
    this.fogTexture = new THREE.DataTexture(new Uint8Array(4), 1, 1, THREE.RedFormat, THREE.UnsignedByteType);
    this.fogTexture.magFilter = THREE.LinearFilter;
    this.fogTexture.minFilter = THREE.LinearFilter;
    this.terrainMaterial = new THREE.ShaderMaterial({
      uniforms: { fog: { value: this.fogTexture }, explored: { value: exploredValue } },
      vertexShader: TERRAIN_VERTEX,
      fragmentShader: TERRAIN_FRAGMENT,
    });
    // uv from world position over the instance's area (mask row 0 at -Y).
    const uv = terrain.attributes.uv;
    for (let i = 0; i < pos.count; i++) uv.setXY(i, (pos.getX(i) - (cx - sx / 2)) / sx, (pos.getY(i) - (cy - sy / 2)) / sy);
    this.scene.add(new THREE.Mesh(terrain, this.terrainMaterial));

    // The fog surface: a sheet at `top` that sinks below the ground where
    // the ground is known (smoothstep of the mask over the explored value).
    this.surfaceCells = 97;
    const surface = new THREE.PlaneGeometry(sx, sy, this.surfaceCells - 1, this.surfaceCells - 1);
    surface.translate(cx, cy, 0);
    this.surface = new THREE.Mesh(
      surface,
      new THREE.MeshLambertMaterial({ color: 0x8a93b8, transparent: true, opacity: 0.55, side: THREE.DoubleSide, depthWrite: false }),
    );
    this.scene.add(this.surface);
    this.explored = exploredValue;

    this.units = new Map();
    this.unitGeometry = new THREE.ConeGeometry(1.6, 5, 12).rotateX(Math.PI / 2).translate(0, 0, 2.5);
    this.unitMaterial = new THREE.MeshLambertMaterial({ color: 0xffb43a, emissive: 0x442200 });
  }

  /** Takes the final mask (`{ width, height, texels }`) into the texture and the surface. */
  setMask(mask) {
    const { width, height, texels } = mask;
    const bytes = new Uint8Array(width * height);
    for (let i = 0; i < bytes.length; i++) bytes[i] = texels[i] >> 8;
    this.fogTexture.image = { data: bytes, width, height };
    this.fogTexture.needsUpdate = true;
    const pos = this.surface.geometry.attributes.position;
    const { cx, cy, sx, sy } = this.area;
    const sample = (x, y) => {
      const u = Math.min(width - 1, Math.max(0, Math.floor(((x - (cx - sx / 2)) / sx) * width)));
      const v = Math.min(height - 1, Math.max(0, Math.floor(((y - (cy - sy / 2)) / sy) * height)));
      return texels[v * width + u] / 65535;
    };
    const groundAt = (x, y) => {
      const c = Math.min(this.ground.width - 1, Math.max(0, Math.floor(x)));
      const r = Math.min(this.ground.height - 1, Math.max(0, Math.floor(y)));
      return this.ground.h[r * this.ground.width + c];
    };
    const top = 8;
    for (let i = 0; i < pos.count; i++) {
      const x = pos.getX(i);
      const y = pos.getY(i);
      const known = Math.min(1, sample(x, y) / Math.max(this.explored, 1e-4));
      const drop = known * known * (3 - 2 * known);
      pos.setZ(i, top + (groundAt(x, y) - 1.5 - top) * drop);
    }
    pos.needsUpdate = true;
    this.surface.geometry.computeVertexNormals();
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
