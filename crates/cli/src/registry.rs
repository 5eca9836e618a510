//! The one place that knows the three backend crates: probing and opening by API.

use blocksweep_core::physical::{self, PhysicalDevice};
use blocksweep_core::{Api, Backend, BackendError, DeviceIdentity};

use crate::args::{CudaCompilerChoice, DeviceArgs};

/// What probing one API found.
pub struct Probe {
    pub api: Api,
    pub devices: Result<Vec<DeviceIdentity>, String>,
}

/// Every API's devices, and the physical devices they make up.
pub struct Registry {
    pub probes: Vec<Probe>,
    pub physical: Vec<PhysicalDevice>,
}

fn probe_one(api: Api) -> Result<Vec<DeviceIdentity>, String> {
    let r = match api {
        Api::Cuda => blocksweep_cuda::probe().map_err(BackendError::from),
        Api::Vulkan => blocksweep_vulkan::probe().map_err(BackendError::from),
        Api::OpenCl => blocksweep_opencl::probe().map_err(BackendError::from),
    };
    match r {
        Ok(d) if d.is_empty() => Err(format!("the {api} driver lists no device")),
        Ok(d) => Ok(d),
        Err(e) => Err(e.message),
    }
}

impl Registry {
    pub fn probe() -> Registry {
        let probes: Vec<Probe> = Api::ALL
            .iter()
            .map(|&api| Probe {
                api,
                devices: probe_one(api),
            })
            .collect();
        let all: Vec<DeviceIdentity> = probes
            .iter()
            .filter_map(|p| p.devices.as_ref().ok())
            .flatten()
            .cloned()
            .collect();
        let physical = physical::group(&all);
        Registry { probes, physical }
    }

    pub fn unavailable(&self, api: Api) -> Option<&str> {
        self.probes
            .iter()
            .find(|p| p.api == api)
            .and_then(|p| p.devices.as_ref().err())
            .map(String::as_str)
    }

    pub fn devices(&self, api: Api) -> &[DeviceIdentity] {
        self.probes
            .iter()
            .find(|p| p.api == api)
            .and_then(|p| p.devices.as_ref().ok())
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }

    /// The physical device `--device` names, or the default one.
    pub fn select(&self, spec: Option<&str>) -> Result<&PhysicalDevice, String> {
        match spec {
            Some(s) => physical::select(&self.physical, s),
            None => physical::default_device(&self.physical).ok_or_else(|| self.nothing_found()),
        }
    }

    /// An API's own default device: its first GPU, else its first device.
    pub fn api_default(&self, api: Api) -> Option<&DeviceIdentity> {
        let d = self.devices(api);
        d.iter()
            .find(|x| x.kind == blocksweep_core::DeviceKind::Gpu)
            .or(d.first())
    }

    pub fn nothing_found(&self) -> String {
        let reasons: Vec<String> = self
            .probes
            .iter()
            .filter_map(|p| p.devices.as_ref().err().map(|e| format!("{}: {e}", p.api)))
            .collect();
        format!("no GPU API found a device ({})", reasons.join("; "))
    }
}

/// How to install a driver for an API, for "unavailable" messages.
pub fn install_hint(api: Api) -> &'static str {
    match api {
        Api::Cuda => "install the NVIDIA driver (libcuda.so.1)",
        Api::Vulkan => "apt-get install libvulkan1 mesa-vulkan-drivers (CPU driver) or a GPU vendor's Vulkan driver",
        Api::OpenCl => "apt-get install ocl-icd-libopencl1 pocl-opencl-icd (CPU driver) or a GPU vendor's OpenCL ICD",
    }
}

/// Opens `device` (an identity from probing) with the kernel compiled.
pub fn open(device: &DeviceIdentity, args: &DeviceArgs) -> Result<Box<dyn Backend>, BackendError> {
    Ok(match device.api {
        Api::Cuda => {
            let compiler = match args.cuda_compiler {
                CudaCompilerChoice::Auto => blocksweep_cuda::CudaCompiler::Auto,
                CudaCompilerChoice::Nvrtc => blocksweep_cuda::CudaCompiler::Nvrtc,
                CudaCompilerChoice::Ptx => blocksweep_cuda::CudaCompiler::Ptx,
            };
            let opts = blocksweep_cuda::CudaOptions { compiler };
            Box::new(blocksweep_cuda::open(device.index, &opts)?)
        }
        Api::Vulkan => {
            let opts = blocksweep_vulkan::VulkanOptions {
                validation: args.vk_validation
                    || blocksweep_vulkan::VulkanOptions::default().validation,
            };
            Box::new(blocksweep_vulkan::open(device.index, &opts)?)
        }
        Api::OpenCl => Box::new(blocksweep_opencl::open(
            device.index,
            &blocksweep_opencl::OpenClOptions::default(),
        )?),
    })
}
