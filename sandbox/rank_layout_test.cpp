#include <doctest/doctest.h>

#include "rank/layout.h"

using namespace sandbox;
using sandbox::rank::heap_layout;
using sandbox::rank::HeapLayout;
using sandbox::rank::kHeapAlign;

TEST_CASE("rank layout: slots fit the largest rank's shape, 256-byte aligned") {
  Job job;
  JobTensor a;
  a.name = "a";
  a.dtype = kf::DType::f32;
  a.shape_by_rank = {{10}, {100}};  // rank 1 is larger: 400 bytes -> 512
  JobTensor b;
  b.name = "b";
  b.dtype = kf::DType::bf16;
  b.shape_by_rank = {{2, 3}, {2, 3}};  // 12 bytes -> 256
  JobTensor e;
  e.name = "e";
  e.dtype = kf::DType::u8;
  e.shape_by_rank = {{0}, {0}};  // empty: still a slot of its own
  job.tensors = {a, b, e};
  job.workspace_bytes = 1000;
  HeapLayout l = heap_layout(job);
  CHECK(l.offset == std::vector<size_t>{0, 512, 768});
  CHECK(l.slot == std::vector<size_t>{512, 256, 256});
  CHECK(l.workspace_offset == 1024);
  CHECK(l.workspace_bytes == 1024);
  CHECK(l.total == 2048);
  for (size_t o : l.offset) CHECK(o % kHeapAlign == 0);
}
