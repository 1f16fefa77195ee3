// dnnplan from C++17: a small exception wrapper over the C status codes, the way a framework
// would integrate it. dnnplan::Error carries the status and the library's message (which names
// the argument or rule that failed). Exits 0 when everything behaves as documented.
#include <dnnplan.h>

#include <cstdio>
#include <stdexcept>
#include <string>

namespace dnnplan {

/// A failed dnnplan call: the status code plus this thread's last-error message.
class Error : public std::runtime_error {
public:
    Error(dnnp_status_t status, const std::string& what)
        : std::runtime_error(what + ": " + dnnp_status_name(status) + ": " + last_error()),
          status_(status) {}

    dnnp_status_t status() const noexcept { return status_; }

    /// This thread's last-error message (two calls: size, then text).
    static std::string last_error() {
        size_t needed = 0;
        if (dnnp_get_last_error_string(nullptr, 0, &needed) != DNNP_STATUS_BUFFER_TOO_SMALL) {
            return {};
        }
        std::string text(needed, '\0');
        if (dnnp_get_last_error_string(text.data(), text.size(), nullptr) != DNNP_STATUS_SUCCESS) {
            return {};
        }
        text.resize(needed - 1);  // drop the NUL
        return text;
    }

private:
    dnnp_status_t status_;
};

/// Throws dnnplan::Error unless `status` is DNNP_STATUS_SUCCESS.
inline void check(dnnp_status_t status, const char* what) {
    if (status != DNNP_STATUS_SUCCESS) {
        throw Error(status, what);
    }
}

}  // namespace dnnplan

int main() {
    std::printf("dnnplan %s (ABI %s), header %d\n", dnnp_get_version_string(),
                dnnp_get_abi_version(), DNNP_VERSION);
    if (dnnp_get_version() != static_cast<size_t>(DNNP_VERSION)) {
        std::fprintf(stderr, "runtime version %zu != header %d\n", dnnp_get_version(), DNNP_VERSION);
        return 1;
    }
    // dnnp_debug_force_panic is the library's test hook for its panic guard: a bug inside
    // dnnplan comes back as DNNP_STATUS_INTERNAL_PANIC with a message, never as a crash.
    try {
        dnnplan::check(dnnp_debug_force_panic("example failure"), "dnnp_debug_force_panic");
        std::fprintf(stderr, "expected an exception\n");
        return 1;
    } catch (const dnnplan::Error& e) {
        std::printf("caught: %s\n", e.what());
        if (e.status() != DNNP_STATUS_INTERNAL_PANIC ||
            std::string(e.what()).find("example failure") == std::string::npos) {
            std::fprintf(stderr, "expected DNNP_STATUS_INTERNAL_PANIC with the panic message\n");
            return 1;
        }
    }
    return 0;
}
