//! The loader entry and the `VkInstance` (with the validation layer and a debug messenger when
//! asked for), and the log the messenger writes to.

use std::ffi::{c_void, CStr};
use std::sync::{Arc, Mutex, OnceLock};

use ash::vk;

use crate::error::{
    map_create_instance, map_enumerate_properties, map_host_device_oom, VulkanError, VulkanResult,
};

const VALIDATION_LAYER: &CStr = c"VK_LAYER_KHRONOS_validation";

/// Validation and performance messages the validation layer reported at WARNING or ERROR
/// severity (not the loader's general notices, see `counts_as_diagnostic`), plus
/// any error a `Drop` ran into. Shared with the debug callback; a clone stays readable after the
/// backend is gone, so messages emitted while destroying objects are not lost.
#[derive(Debug, Clone, Default)]
pub struct MessageLog(Arc<Mutex<Vec<String>>>);

impl MessageLog {
    /// Everything recorded so far.
    pub fn messages(&self) -> Vec<String> {
        // A poisoned lock only means another thread panicked mid-push; the Vec is still valid.
        self.0.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    pub(crate) fn push(&self, message: String) {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(message);
    }

    fn as_user_data(&self) -> *mut c_void {
        Arc::as_ptr(&self.0) as *mut c_void
    }
}

/// Whether a debug-utils message is a finding about this program's use of Vulkan: a
/// validation or performance message at WARNING or ERROR. General messages are the loader's
/// and layers' notices (with `VK_INSTANCE_LAYERS` set the loader warns "Loader Message: env var
/// 'VK_INSTANCE_LAYERS' defined and adding layers ..."), never a fault of ours.
pub(crate) fn counts_as_diagnostic(
    severity: vk::DebugUtilsMessageSeverityFlagsEXT,
    types: vk::DebugUtilsMessageTypeFlagsEXT,
    id_name: &str,
) -> bool {
    let severe = severity.intersects(
        vk::DebugUtilsMessageSeverityFlagsEXT::WARNING
            | vk::DebugUtilsMessageSeverityFlagsEXT::ERROR,
    );
    let finding = types.intersects(
        vk::DebugUtilsMessageTypeFlagsEXT::VALIDATION
            | vk::DebugUtilsMessageTypeFlagsEXT::PERFORMANCE,
    );
    severe && finding && id_name != "Loader Message"
}

/// Records one debug-utils message that [`counts_as_diagnostic`]. Never unwinds into the
/// driver.
unsafe extern "system" fn debug_callback(
    severity: vk::DebugUtilsMessageSeverityFlagsEXT,
    types: vk::DebugUtilsMessageTypeFlagsEXT,
    data: *const vk::DebugUtilsMessengerCallbackDataEXT<'_>,
    user_data: *mut c_void,
) -> vk::Bool32 {
    if data.is_null() || user_data.is_null() {
        return vk::FALSE;
    }
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        // SAFETY: the layer passes a valid callback-data struct for the duration of the call,
        // and `user_data` is the `Mutex` inside the `MessageLog` that `InstanceShared` keeps
        // alive until after the instance (and with it every messenger) is destroyed.
        let (data, log) = unsafe { (&*data, &*(user_data as *const Mutex<Vec<String>>)) };
        let text = |s: Option<&CStr>| s.map(|s| s.to_string_lossy().into_owned());
        // SAFETY: `data` is the valid struct the layer passed (see above);
        // `message_id_name_as_c_str` reads its pointer, NUL-terminated or null per the spec, during
        // the call.
        let id = text(unsafe { data.message_id_name_as_c_str() }).unwrap_or_default();
        if !counts_as_diagnostic(severity, types, &id) {
            return;
        }
        // SAFETY: as above: the layer's NUL-terminated message, alive for the duration of the
        // callback.
        let message = text(unsafe { data.message_as_c_str() }).unwrap_or_default();
        log.lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(format!("[{severity:?} {types:?}] {id}: {message}"));
    }));
    vk::FALSE
}

/// The instance and what must outlive it. Dropped last of all Vulkan objects: every device
/// holds an `Arc` to it.
pub(crate) struct InstanceShared {
    pub raw: ash::Instance,
    /// The API version the instance was created with: min(loader's, 1.3).
    pub api_version: u32,
    pub log: MessageLog,
    messenger: Option<(ash::ext::debug_utils::Instance, vk::DebugUtilsMessengerEXT)>,
    /// Declared last so that libvulkan is unloaded only after the instance is destroyed.
    entry: ash::Entry,
}

fn has_extension(list: &[vk::ExtensionProperties], name: &CStr) -> bool {
    list.iter()
        .any(|e| e.extension_name_as_c_str().is_ok_and(|n| n == name))
}

/// The instance the last [`probe`](crate::probe) made, kept for the `open` that usually
/// follows it in the same process: a second instance loads every driver (ICD) again, and
/// lavapipe's pulls in libLLVM (20 to 70 ms of `open` on a two-core machine).
static KEPT: Mutex<Option<InstanceShared>> = Mutex::new(None);

impl InstanceShared {
    pub fn new(validation: bool) -> VulkanResult<InstanceShared> {
        let entry = load_entry()?;
        // SAFETY: `entry` holds the loader's vkGetInstanceProcAddr, and the loader stays loaded for
        // the process; ash returns None where the 1.1 entry point is missing.
        let loader_version = unsafe { entry.try_enumerate_instance_version() }
            .map_err(map_host_device_oom("vkEnumerateInstanceVersion"))?
            .unwrap_or(vk::API_VERSION_1_0);
        let api_version = loader_version.min(vk::API_VERSION_1_3);
        let enabled = Enabled::choose(&entry, validation)?;
        let log = MessageLog::default();
        let raw = create(&entry, api_version, &enabled, validation, &log)?;
        let mut instance = InstanceShared {
            raw,
            api_version,
            log,
            messenger: None,
            entry,
        };
        if validation {
            let loader = ash::ext::debug_utils::Instance::new(&instance.entry, &instance.raw);
            let info = messenger_create_info(&instance.log);
            // On failure `instance` drops here and destroys the VkInstance.
            // SAFETY: `instance.raw` is alive and was created with VK_EXT_debug_utils
            // (`Enabled::add_validation`); `info`'s user data points at the log's Mutex, which
            // `instance` keeps alive until after the messenger is destroyed.
            let messenger = unsafe { loader.create_debug_utils_messenger(&info, None) }
                .map_err(map_host_device_oom("vkCreateDebugUtilsMessengerEXT"))?;
            instance.messenger = Some((loader, messenger));
        }
        Ok(instance)
    }

    /// What the report says about checking (`Limits.extra`'s "validation"), where the
    /// validation layer and its messenger are live on this instance.
    pub fn validation(&self) -> Option<String> {
        self.messenger.as_ref().map(|_| {
            format!(
                "{} on, with synchronization validation",
                VALIDATION_LAYER.to_string_lossy()
            )
        })
    }

    /// Keeps this instance (made without validation) for the next [`InstanceShared::take_kept`],
    /// replacing, and destroying, any kept before.
    pub fn keep_for_open(self) {
        *KEPT.lock().unwrap_or_else(|e| e.into_inner()) = Some(self);
    }

    /// The instance the last `probe` kept, if no `open` has taken it yet. It has no validation
    /// layer, and its physical devices are the ones that probe numbered.
    pub fn take_kept() -> Option<InstanceShared> {
        KEPT.lock().unwrap_or_else(|e| e.into_inner()).take()
    }
}

/// The system loader library, opened once and kept for the process (as libshaderc is): through
/// the workspace's one libloading, not ash's "loaded" feature, which pulls an older one.
fn load_entry() -> VulkanResult<ash::Entry> {
    static LOADER: OnceLock<Result<libloading::Library, String>> = OnceLock::new();
    let lib = LOADER
        .get_or_init(|| {
            // SAFETY: loading the system loader library runs no initialiser with preconditions of
            // ours.
            unsafe { libloading::Library::new("libvulkan.so.1") }.map_err(|e| e.to_string())
        })
        .as_ref()
        .map_err(|e| VulkanError::Unavailable(format!("libvulkan.so.1 not found ({e})")))?;
    // SAFETY: vkGetInstanceProcAddr has this prototype in every Vulkan loader.
    let get = unsafe { lib.get::<vk::PFN_vkGetInstanceProcAddr>(b"vkGetInstanceProcAddr\0") }
        .map_err(|e| {
            VulkanError::Unavailable(format!(
                "libvulkan.so.1 is not a usable Vulkan loader ({e})"
            ))
        })?;
    // SAFETY: the pointer is the loader's, which stays loaded for the process.
    Ok(unsafe {
        ash::Entry::from_static_fn(ash::StaticFn {
            get_instance_proc_addr: *get,
        })
    })
}

/// The instance extensions and layers to enable, and the create flags they need.
struct Enabled {
    flags: vk::InstanceCreateFlags,
    extensions: Vec<&'static CStr>,
    layers: Vec<&'static CStr>,
}

impl Enabled {
    fn choose(entry: &ash::Entry, validation: bool) -> VulkanResult<Enabled> {
        // SAFETY: `entry` holds a loaded loader (kept for the process); a None layer name lists the
        // loader's own extensions.
        let available = unsafe { entry.enumerate_instance_extension_properties(None) }.map_err(
            map_enumerate_properties("vkEnumerateInstanceExtensionProperties"),
        )?;
        let mut enabled = Enabled {
            flags: vk::InstanceCreateFlags::empty(),
            extensions: Vec::new(),
            layers: Vec::new(),
        };
        if has_extension(&available, ash::khr::portability_enumeration::NAME) {
            // Lists portability (non-conformant, e.g. MoltenVK) devices too.
            enabled
                .extensions
                .push(ash::khr::portability_enumeration::NAME);
            enabled.flags |= vk::InstanceCreateFlags::ENUMERATE_PORTABILITY_KHR;
        }
        if validation {
            enabled.add_validation(entry, &available)?;
        }
        Ok(enabled)
    }

    /// The Khronos validation layer with debug utils and validation features, from the loader
    /// or the layer itself; `Unavailable` naming what is missing.
    fn add_validation(
        &mut self,
        entry: &ash::Entry,
        available: &[vk::ExtensionProperties],
    ) -> VulkanResult<()> {
        // SAFETY: `entry` holds a loaded loader (kept for the process); the call takes no pointers
        // of ours.
        let layer_props = unsafe { entry.enumerate_instance_layer_properties() }.map_err(
            map_enumerate_properties("vkEnumerateInstanceLayerProperties"),
        )?;
        if !layer_props
            .iter()
            .any(|l| l.layer_name_as_c_str().is_ok_and(|n| n == VALIDATION_LAYER))
        {
            return Err(VulkanError::Unavailable(
                "VK_LAYER_KHRONOS_validation not installed (apt-get install vulkan-validationlayers)"
                    .into(),
            ));
        }
        self.layers.push(VALIDATION_LAYER);
        let from_layer =
            // SAFETY: `entry` holds a loaded loader; `VALIDATION_LAYER` is a static NUL-terminated
            // name.
            unsafe { entry.enumerate_instance_extension_properties(Some(VALIDATION_LAYER)) }
                .map_err(map_enumerate_properties(
                    "vkEnumerateInstanceExtensionProperties",
                ))?;
        for ext in [
            ash::ext::debug_utils::NAME,
            ash::ext::validation_features::NAME,
        ] {
            if !has_extension(available, ext) && !has_extension(&from_layer, ext) {
                return Err(VulkanError::Unavailable(format!(
                    "validation requested but {} is not available from the loader or {}",
                    ext.to_string_lossy(),
                    VALIDATION_LAYER.to_string_lossy()
                )));
            }
            self.extensions.push(ext);
        }
        Ok(())
    }
}

/// vkCreateInstance with what `enabled` lists; with `validation`, the messenger writing to
/// `log` and synchronization validation are chained in.
fn create(
    entry: &ash::Entry,
    api_version: u32,
    enabled: &Enabled,
    validation: bool,
    log: &MessageLog,
) -> VulkanResult<ash::Instance> {
    let app = vk::ApplicationInfo::default()
        .application_name(c"blocksweep")
        .engine_name(c"blocksweep")
        .api_version(api_version);
    let layer_ptrs: Vec<_> = enabled.layers.iter().map(|l| l.as_ptr()).collect();
    let ext_ptrs: Vec<_> = enabled.extensions.iter().map(|e| e.as_ptr()).collect();
    let mut messenger_info = messenger_create_info(log);
    // Synchronization validation catches missing barriers; best practices stays off (it
    // warns about things that are deliberate here, e.g. tiny dispatches).
    let enabled_features = [vk::ValidationFeatureEnableEXT::SYNCHRONIZATION_VALIDATION];
    let mut features =
        vk::ValidationFeaturesEXT::default().enabled_validation_features(&enabled_features);
    let mut info = vk::InstanceCreateInfo::default()
        .application_info(&app)
        .flags(enabled.flags)
        .enabled_layer_names(&layer_ptrs)
        .enabled_extension_names(&ext_ptrs);
    if validation {
        // Chained here, the messenger also sees vkCreateInstance and vkDestroyInstance.
        info = info.push_next(&mut messenger_info).push_next(&mut features);
    }
    // SAFETY: every pointer in `info` (application info, layer and extension name arrays, the
    // chained messenger and validation features) points at locals or statics that outlive the call;
    // the chained structs are added only with validation, whose extensions `Enabled` checked and
    // enables.
    unsafe { entry.create_instance(&info, None) }.map_err(map_create_instance("vkCreateInstance"))
}

fn messenger_create_info(log: &MessageLog) -> vk::DebugUtilsMessengerCreateInfoEXT<'static> {
    vk::DebugUtilsMessengerCreateInfoEXT::default()
        .message_severity(
            vk::DebugUtilsMessageSeverityFlagsEXT::WARNING
                | vk::DebugUtilsMessageSeverityFlagsEXT::ERROR,
        )
        .message_type(
            vk::DebugUtilsMessageTypeFlagsEXT::GENERAL
                | vk::DebugUtilsMessageTypeFlagsEXT::VALIDATION
                | vk::DebugUtilsMessageTypeFlagsEXT::PERFORMANCE,
        )
        .pfn_user_callback(Some(debug_callback))
        .user_data(log.as_user_data())
}

impl Drop for InstanceShared {
    fn drop(&mut self) {
        // SAFETY: every child object holds an Arc to this instance, so none is left; the
        // messenger goes first, then the instance (whose chained messenger reports its own
        // destruction into `log`, still alive here).
        unsafe {
            if let Some((loader, messenger)) = self.messenger.take() {
                loader.destroy_debug_utils_messenger(messenger, None);
            }
            self.raw.destroy_instance(None);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use vk::DebugUtilsMessageSeverityFlagsEXT as Severity;
    use vk::DebugUtilsMessageTypeFlagsEXT as Type;

    #[test]
    fn loader_notices_are_not_diagnostics() {
        // What the loader says with VK_INSTANCE_LAYERS=VK_LAYER_KHRONOS_validation.
        assert!(!counts_as_diagnostic(
            Severity::WARNING,
            Type::GENERAL,
            "Loader Message"
        ));
        // Even if a loader ever tagged one as validation.
        assert!(!counts_as_diagnostic(
            Severity::ERROR,
            Type::VALIDATION,
            "Loader Message"
        ));
        assert!(!counts_as_diagnostic(Severity::ERROR, Type::GENERAL, ""));
    }

    #[test]
    fn validation_findings_are() {
        let hazard = "SYNC-HAZARD-WRITE-AFTER-WRITE";
        assert!(counts_as_diagnostic(
            Severity::ERROR,
            Type::VALIDATION,
            hazard
        ));
        assert!(counts_as_diagnostic(
            Severity::WARNING,
            Type::PERFORMANCE,
            "BestPractices-x"
        ));
        assert!(counts_as_diagnostic(
            Severity::WARNING,
            Type::GENERAL | Type::VALIDATION,
            "VUID-x"
        ));
        assert!(!counts_as_diagnostic(
            Severity::INFO,
            Type::VALIDATION,
            hazard
        ));
        assert!(!counts_as_diagnostic(
            Severity::VERBOSE,
            Type::VALIDATION,
            hazard
        ));
    }
}
