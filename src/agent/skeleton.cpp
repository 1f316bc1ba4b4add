// agent/skeleton.cpp: see skeleton.h.
#include "agent/skeleton.h"

#include <fmt/core.h>

namespace agent {

namespace {

// "fp32", or "fp32 or bf16 (the dtype parameter)" for a tensor typed by a parameter.
std::string dtype_text(const suite::Problem& p, const suite::TensorSpec& t) {
  if (t.dtype.empty() || t.dtype[0] != '$') return t.dtype;
  const suite::ParamSpec* ps = p.find_param(t.dtype.substr(1));
  std::string any;
  if (ps)
    for (auto& c : ps->choices) any += (any.empty() ? "" : " or ") + c.str;
  return (any.empty() ? "any dtype" : any) + " (parameter " + t.dtype.substr(1) + ")";
}

std::string shape_text(const suite::TensorSpec& t) {
  std::string s;
  for (auto& e : t.shape) s += (s.empty() ? "" : ", ") + e.text();
  return "[" + s + "]";
}

// One line per tensor and per numeric parameter, bound to a local of the same name.
std::string bindings(const suite::Problem& p, std::string* unused) {
  std::string s;
  for (auto& t : p.tensors) {
    s += fmt::format("  {}kf::Tensor& {} = t[\"{}\"];  // {}, {} {}\n", t.output() ? "" : "const ",
                     t.name, t.name, t.output() ? "output" : "input", dtype_text(p, t),
                     shape_text(t));
    *unused += "(void)" + t.name + ", ";
  }
  for (auto& ps : p.params) {
    if (!ps.numeric()) continue;
    if (ps.type == suite::ParamType::integer)
      s += fmt::format("  const int64_t {} = t.iparam(\"{}\");\n", ps.name, ps.name);
    else
      s += fmt::format("  const double {} = t.param(\"{}\");\n", ps.name, ps.name);
    *unused += "(void)" + ps.name + ", ";
  }
  return s;
}

}  // namespace

std::string kernel_skeleton(const suite::Problem& p, sandbox::Backend backend) {
  const bool cuda = backend == sandbox::Backend::cuda;
  std::string unused;
  const std::string binds = bindings(p, &unused);
  std::string s = fmt::format("// {} for {}: compiles and loads, computes nothing yet.\n",
                              cuda ? "kernel.cu" : "kernel.cpp", p.name);
  s += cuda ? "#include <kf/kf.cuh>\n\n// TODO: __global__ kernels.\n\n"
            : "#include <kf/host.h>\n#include <kf/kf.h>\n\n";
  s += "extern \"C\" int kf_setup(kf::Comm& comm, kf::Tensors& t) {\n"
       "  // Optional, untimed, once. Collective: every rank makes the same comm.alloc /\n"
       "  // comm.signals calls in the same order (signals, workspace: zeroed, symmetric).\n"
       "  (void)comm, (void)t;\n"
       "  return 0;\n"
       "}\n\n"
       "extern \"C\" int kf_run(kf::Comm& comm, kf::Tensors& t) {\n";
  s += binds;
  s += cuda ? "  // comm.rank, comm.world; comm.peer(p, r) is rank r's copy of heap pointer p.\n"
              "  // TODO: launch on comm.stream() and return without synchronizing.\n"
            : "  // comm.rank, comm.world; comm.peer(p, r) is rank r's copy of heap pointer p.\n"
              "  // TODO: the work, on the CPU, before returning.\n";
  s += "  " + unused + "(void)comm;\n  return 0;\n}\n";
  return s;
}

}  // namespace agent
