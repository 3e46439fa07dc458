#include "kernels/kernel_config.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "kernels/default_config.h"
#include "tests/build_kernels.h"

namespace mmtune {
namespace {

Machine TestMachine(IsaLevel cap) {
  auto host = DetectHostMachine();
  EXPECT_TRUE(host.ok());
  return DescribeMachine(host->cpu, host->topology, cap);
}

Problem Square(std::int64_t size) {
  return Problem{DType::kF32, Layout::kRowMajor, Trans::kNo, Trans::kNo, size, size, size, 1};
}

KernelConfig GenericPacked() {
  KernelConfig c;
  c.family = KernelFamily::kPacked;
  c.isa = IsaLevel::kGeneric;
  c.mr = 6;
  c.nr = 8;  // 2 vectors of 4 floats
  c.k_unroll = 4;
  c.mc = 60;
  c.kc = 128;
  c.nc = 256;
  return c;
}

TEST(KernelConfigTest, ValidConfigPasses) {
  const Status status = GenericPacked().Validate(Square(256), TestMachine(IsaLevel::kGeneric));
  EXPECT_TRUE(status.ok()) << status.error().message;
}

TEST(KernelConfigTest, ValidationNamesTheProblem) {
  const Machine machine = TestMachine(IsaLevel::kGeneric);
  struct Case {
    const char* field;
    void (*mutate)(KernelConfig&);
  };
  const Case cases[] = {
      {"isa", [](KernelConfig& c) { c.isa = IsaLevel::kAvx2; }},
      {"micro-kernel", [](KernelConfig& c) { c.mr = 7; }},
      {"k_unroll", [](KernelConfig& c) { c.k_unroll = 3; }},
      {"mc", [](KernelConfig& c) { c.mc = 61; }},
      {"nc", [](KernelConfig& c) { c.nc = 0; }},
      {"kc", [](KernelConfig& c) { c.kc = 1 << 20; }},
      {"threads", [](KernelConfig& c) { c.threads = 0; }},
      {"threads", [](KernelConfig& c) { c.threads = 100000; }},
      {"prefetch", [](KernelConfig& c) { c.prefetch_a = -1; }},
      {"gemv", [](KernelConfig& c) { c.family = KernelFamily::kGemv; }},
      {"direct", [](KernelConfig& c) { c.family = KernelFamily::kDirect; }},
  };
  for (const Case& test : cases) {
    KernelConfig config = GenericPacked();
    test.mutate(config);
    const Status status = config.Validate(Square(64), machine);
    ASSERT_FALSE(status.ok()) << test.field;
    EXPECT_NE(status.error().message.find(test.field), std::string::npos)
        << test.field << ": " << status.error().message;
  }
}

// An AMX tile kernel (bf16 32x32 in the avx512 table) takes kc in whole tile rows (32 bf16 or
// 64 bytes), and a machine without AMX refuses it by name; the same config with AMX passes.
TEST(KernelConfigTest, TileKernelsTakeWholeTileRowsAndNeedAmx) {
  MMTUNE_SKIP_WITHOUT_X86_KERNELS();
  KernelConfig c;
  c.family = KernelFamily::kPacked;
  c.isa = IsaLevel::kAvx512;
  c.mr = 32;
  c.nr = 32;
  c.k_unroll = 1;
  c.mc = 64;
  c.nc = 64;
  c.kc = 64;
  EXPECT_TRUE(c.ValidateFor(DType::kBF16).ok());
  EXPECT_TRUE(c.ValidateFor(DType::kS8).ok());
  c.kc = 48;  // whole bf16 pairs and byte quads, not whole tile rows
  const Status bf16 = c.ValidateFor(DType::kBF16);
  ASSERT_FALSE(bf16.ok());
  EXPECT_NE(bf16.error().message.find("multiple of 32"), std::string::npos)
      << bf16.error().message;
  c.kc = 96;
  const Status s8 = c.ValidateFor(DType::kS8);
  ASSERT_FALSE(s8.ok());
  EXPECT_NE(s8.error().message.find("multiple of 64"), std::string::npos) << s8.error().message;

  auto host = DetectHostMachine();
  ASSERT_TRUE(host.ok());
  CpuFeatures cpu = host->cpu;
  cpu.avx2 = cpu.fma = cpu.avx512f = cpu.avx512bw = cpu.avx512vl = cpu.avx512dq = true;
  cpu.avx512_bf16 = true;
  cpu.amx_tile = cpu.amx_bf16 = false;
  const Machine no_amx = DescribeMachine(cpu, host->topology, IsaLevel::kAvx512);
  ASSERT_EQ(no_amx.kernel_isa, IsaLevel::kAvx512);
  c.kc = 64;
  const Problem problem{DType::kBF16, Layout::kRowMajor, Trans::kNo, Trans::kNo, 64, 64, 64, 1};
  const Status refused = c.Validate(problem, no_amx);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("AMX_BF16"), std::string::npos)
      << refused.error().message;
  // A vector kernel of the same table stays valid there.
  c.mr = 8;
  c.mc = 64;
  EXPECT_TRUE(c.Validate(problem, no_amx).ok());
}

// The direct family takes one block, kc (0 = the whole K at once), and no mc or nc.
TEST(KernelConfigTest, DirectTakesKcOnly) {
  const Machine machine = TestMachine(IsaLevel::kGeneric);
  KernelConfig direct = GenericPacked();
  direct.family = KernelFamily::kDirect;
  direct.mc = 0;
  direct.nc = 0;
  direct.kc = 0;
  EXPECT_TRUE(direct.Validate(Square(64), machine).ok());
  EXPECT_EQ(direct.ToString().find("kc"), std::string::npos) << direct.ToString();
  direct.kc = 512;
  const Status blocked = direct.Validate(Square(64), machine);
  EXPECT_TRUE(blocked.ok()) << blocked.error().message;
  EXPECT_NE(direct.ToString().find(" kc512 "), std::string::npos) << direct.ToString();
  const nlohmann::json json = direct;
  auto parsed = KernelConfigFromJson(json);
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  EXPECT_EQ(*parsed, direct);
  direct.kc = -1;
  const Status negative = direct.Validate(Square(64), machine);
  ASSERT_FALSE(negative.ok());
  EXPECT_NE(negative.error().message.find("kc"), std::string::npos) << negative.error().message;
  direct.kc = 0;
  direct.mc = 60;
  const Status with_mc = direct.Validate(Square(64), machine);
  ASSERT_FALSE(with_mc.ok());
  EXPECT_NE(with_mc.error().message.find("mc"), std::string::npos) << with_mc.error().message;
  // It packs nothing, so no split that shares or repeats packing.
  direct.mc = 0;
  for (ParallelLoop loop : {ParallelLoop::kJr, ParallelLoop::kIcOwnB}) {
    direct.parallel_loop = loop;
    const Status split = direct.Validate(Square(64), machine);
    ASSERT_FALSE(split.ok()) << ToString(loop);
    EXPECT_NE(split.error().message.find(ToString(loop)), std::string::npos)
        << split.error().message;
  }
}

TEST(KernelConfigTest, JsonRoundTrip) {
  KernelConfig config = GenericPacked();
  config.prefetch_a = 3;
  config.prefetch_c = true;
  config.parallel_loop = ParallelLoop::kJr;
  config.threads = 2;
  const nlohmann::json json = config;
  EXPECT_EQ(json.at("family"), "packed");
  EXPECT_EQ(json.at("parallel_loop"), "jr");
  auto back = KernelConfigFromJson(json);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(*back, config);
  EXPECT_EQ(config.ToString(), "packed generic 6x8 ku4 mc60 kc128 nc256 pf3/0/c jr t2");
}

TEST(KernelConfigTest, TextRoundTrip) {
  KernelConfig packed = GenericPacked();
  packed.prefetch_a = 3;
  packed.prefetch_b = 12;
  packed.prefetch_c = true;
  packed.parallel_loop = ParallelLoop::kIc;
  packed.threads = 2;
  KernelConfig direct = GenericPacked();
  direct.family = KernelFamily::kDirect;
  direct.mc = 0;
  direct.nc = 0;
  direct.kc = 384;
  direct.k_unroll = 1;
  KernelConfig direct_by_rows = direct;
  direct_by_rows.tile_order = TileOrder::kRowPanels;
  KernelConfig gemv;
  gemv.family = KernelFamily::kGemv;
  gemv.isa = IsaLevel::kAvx2;
  gemv.mr = 8;
  gemv.nr = 16;
  KernelConfig packed_own_b = packed;
  packed_own_b.parallel_loop = ParallelLoop::kIcOwnB;
  EXPECT_EQ(packed_own_b.ToString(), "packed generic 6x8 ku4 mc60 kc128 nc256 pf3/12/c icown t2");
  for (const KernelConfig& config : {packed, packed_own_b, direct, direct_by_rows, gemv}) {
    auto back = ParseKernelConfig(config.ToString());
    ASSERT_TRUE(back.ok()) << config.ToString() << ": " << back.error().message;
    EXPECT_EQ(*back, config) << config.ToString() << " came back as " << back->ToString();
  }
  // Fields in another order, extra spaces, and fields left at their defaults.
  auto reordered = ParseKernelConfig("packed  generic 6x8 t2 jr kc128 pf3/0/c nc256 mc60 ku4");
  ASSERT_TRUE(reordered.ok()) << reordered.error().message;
  KernelConfig expected = GenericPacked();
  expected.prefetch_a = 3;
  expected.prefetch_c = true;
  expected.parallel_loop = ParallelLoop::kJr;
  expected.threads = 2;
  EXPECT_EQ(*reordered, expected) << reordered->ToString();
  auto short_form = ParseKernelConfig("direct avx2 4x24");
  ASSERT_TRUE(short_form.ok()) << short_form.error().message;
  EXPECT_EQ(short_form->k_unroll, 1);
  EXPECT_EQ(short_form->kc, 0);
  EXPECT_EQ(short_form->threads, 1);
  EXPECT_EQ(short_form->tile_order, TileOrder::kColumnPanels);
}

TEST(KernelConfigTest, TileOrderIsWrittenOnlyWhereItIsNotTheDefault) {
  KernelConfig direct = GenericPacked();
  direct.family = KernelFamily::kDirect;
  direct.mc = 0;
  direct.nc = 0;
  direct.kc = 0;
  EXPECT_EQ(direct.ToString(), "direct generic 6x8 ku4 pf0/0 jc t1");
  direct.tile_order = TileOrder::kRowPanels;
  EXPECT_EQ(direct.ToString(), "direct generic 6x8 ku4 pf0/0 rowpanels jc t1");
  auto named_default = ParseKernelConfig("direct generic 6x8 ku4 columnpanels");
  ASSERT_TRUE(named_default.ok()) << named_default.error().message;
  EXPECT_EQ(named_default->tile_order, TileOrder::kColumnPanels);

  // JSON too names the order only where it is not the default, so that the stored JSON (and
  // hash) of a config from before the field existed is still the config's.
  const nlohmann::json column_first = named_default.value();
  EXPECT_FALSE(column_first.contains("tile_order")) << column_first.dump();
  const nlohmann::json json = direct;
  EXPECT_EQ(json.at("tile_order"), "rowpanels");
  auto back = KernelConfigFromJson(json);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(*back, direct);
  // Configs stored before the field existed ran column panels first.
  nlohmann::json stored_before = json;
  stored_before.erase("tile_order");
  auto old = KernelConfigFromJson(stored_before);
  ASSERT_TRUE(old.ok()) << old.error().message;
  EXPECT_EQ(old->tile_order, TileOrder::kColumnPanels);
  nlohmann::json unknown = json;
  unknown["tile_order"] = "diagonal";
  auto bad = KernelConfigFromJson(unknown);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("diagonal"), std::string::npos) << bad.error().message;
}

// ValidateFields is ValidateFor without the registry: it passes a kernel no table has (db/ links
// no kernel) and still refuses every field out of range, a zero tile included.
TEST(KernelConfigTest, FieldChecksNeedNoRegistry) {
  KernelConfig unknown_kernel = GenericPacked();
  unknown_kernel.mr = 7;
  unknown_kernel.nr = 9;
  unknown_kernel.mc = 7;
  unknown_kernel.nc = 9;
  EXPECT_TRUE(unknown_kernel.ValidateFields(DType::kF32).ok());
  const Status status = unknown_kernel.ValidateFor(DType::kF32);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.error().message.find("micro-kernel 7x9"), std::string::npos)
      << status.error().message;
  KernelConfig zero_tile = GenericPacked();
  zero_tile.mr = 0;
  EXPECT_FALSE(zero_tile.ValidateFields(DType::kF32).ok());
  EXPECT_FALSE(zero_tile.ValidateFor(DType::kF32).ok());
  KernelConfig bad_mc = GenericPacked();
  bad_mc.mc = bad_mc.mr + 1;
  EXPECT_FALSE(bad_mc.ValidateFields(DType::kF32).ok());
}

TEST(KernelConfigTest, AInPlaceIsWrittenOnlyWhereSet) {
  KernelConfig packed = GenericPacked();
  const nlohmann::json packs_a = packed;
  EXPECT_FALSE(packs_a.contains("a_in_place")) << packs_a.dump();
  packed.a_in_place = true;
  EXPECT_EQ(packed.ToString(), "packed generic 6x8 ku4 mc60 kc128 nc256 pf0/0 ainplace jc t1");
  auto text = ParseKernelConfig(packed.ToString());
  ASSERT_TRUE(text.ok()) << text.error().message;
  EXPECT_EQ(*text, packed);
  const nlohmann::json json = packed;
  EXPECT_EQ(json.at("a_in_place"), true);
  auto back = KernelConfigFromJson(json);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(*back, packed);
  // Configs stored before the field existed packed A.
  nlohmann::json stored_before = json;
  stored_before.erase("a_in_place");
  auto old = KernelConfigFromJson(stored_before);
  ASSERT_TRUE(old.ok()) << old.error().message;
  EXPECT_FALSE(old->a_in_place);
  nlohmann::json not_bool = json;
  not_bool["a_in_place"] = 1;
  auto bad = KernelConfigFromJson(not_bool);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("a_in_place"), std::string::npos) << bad.error().message;
  auto twice = ParseKernelConfig("packed avx2 4x16 ainplace ainplace");
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.error().message.find("repeated field 'ainplace'"), std::string::npos)
      << twice.error().message;
}

// A buffer of C sums: written only where set, read back from text and JSON (absent: C written
// each k block), and valid for the packed tile kernels only.
TEST(KernelConfigTest, SumsBufferIsForTileKernelsOnly) {
  MMTUNE_SKIP_WITHOUT_X86_KERNELS();
  KernelConfig tiles;
  tiles.family = KernelFamily::kPacked;
  tiles.isa = IsaLevel::kAvx512;
  tiles.mr = 16;
  tiles.nr = 32;
  tiles.mc = 64;
  tiles.nc = 64;
  tiles.kc = 64;
  tiles.threads = 2;
  const nlohmann::json writes_c = tiles;
  EXPECT_FALSE(writes_c.contains("c_buffer")) << writes_c.dump();
  tiles.c_buffer = true;
  EXPECT_EQ(tiles.ToString(), "packed avx512 16x32 ku1 mc64 kc64 nc64 pf0/0 cbuf jc t2");
  auto text = ParseKernelConfig(tiles.ToString());
  ASSERT_TRUE(text.ok()) << text.error().message;
  EXPECT_EQ(*text, tiles);
  const nlohmann::json json = tiles;
  EXPECT_EQ(json.at("c_buffer"), true);
  auto back = KernelConfigFromJson(json);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(*back, tiles);
  nlohmann::json not_bool = json;
  not_bool["c_buffer"] = "yes";
  auto bad = KernelConfigFromJson(not_bool);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("c_buffer"), std::string::npos) << bad.error().message;
  for (DType dtype : {DType::kBF16, DType::kS8}) {
    EXPECT_TRUE(tiles.ValidateFor(dtype).ok()) << tiles.ValidateFor(dtype).error().message;
  }
  // Not for a vector kernel of the same ISA, nor for f32.
  KernelConfig vector = tiles;
  vector.mr = 8;
  vector.mc = 64;
  const Status vector_status = vector.ValidateFor(DType::kBF16);
  ASSERT_FALSE(vector_status.ok());
  EXPECT_NE(vector_status.error().message.find("cbuf"), std::string::npos)
      << vector_status.error().message;
  KernelConfig f32 = GenericPacked();
  f32.c_buffer = true;
  const Status f32_status = f32.ValidateFor(DType::kF32);
  ASSERT_FALSE(f32_status.ok());
  EXPECT_NE(f32_status.error().message.find("cbuf"), std::string::npos)
      << f32_status.error().message;
}

TEST(KernelConfigTest, OnlyTheDirectFamilyTakesARowPanelOrder) {
  const Machine machine = TestMachine(IsaLevel::kGeneric);
  KernelConfig packed = GenericPacked();
  ASSERT_TRUE(packed.Validate(Square(64), machine).ok());
  packed.tile_order = TileOrder::kRowPanels;
  const Status status = packed.Validate(Square(64), machine);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.error().message.find("tile order"), std::string::npos)
      << status.error().message;
}

TEST(KernelConfigTest, MalformedTextNamesTheWord) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "family isa MRxNR"},
      {"packed avx2", "family isa MRxNR"},
      {"tiled avx2 6x16", "tiled"},
      {"packed avx1024 6x16", "avx1024"},
      {"packed avx2 6by16", "6by16"},
      {"packed avx2 6x", "6x"},
      {"packed avx2 -6x16", "-6x16"},
      {"packed avx2 6x16 mc", "'mc'"},
      {"packed avx2 6x16 mc12a", "mc12a"},
      {"packed avx2 6x16 zz3", "zz3"},
      {"packed avx2 6x16 kc-5", "kc-5"},
      {"packed avx2 6x16 kc99999999999", "kc99999999999"},
      {"packed avx2 6x16 pf1", "pf1"},
      {"packed avx2 6x16 pf1/2/x", "pf1/2/x"},
      {"packed avx2 6x16 kc256 kc512", "repeated field 'kc512'"},
      {"packed avx2 6x16 jc ic", "repeated field 'ic'"},
      {"direct avx2 6x16 rowpanels columnpanels", "repeated field 'columnpanels'"},
      {"direct avx2 6x16 rowpanel", "rowpanel"},
  };
  for (const auto& [text, needle] : cases) {
    auto config = ParseKernelConfig(text);
    ASSERT_FALSE(config.ok()) << "'" << text << "' parsed as " << config->ToString();
    EXPECT_NE(config.error().message.find(needle), std::string::npos)
        << "'" << text << "': " << config.error().message;
  }
}

TEST(KernelConfigTest, HostileJsonIsAnErrorNotACrash) {
  const nlohmann::json good = GenericPacked();
  std::vector<nlohmann::json> hostile = {nlohmann::json::array(), nlohmann::json("packed"),
                                         nlohmann::json::object()};
  for (const char* field : {"mr", "family", "isa", "prefetch_c", "parallel_loop", "threads"}) {
    nlohmann::json missing = good;
    missing.erase(field);
    hostile.push_back(missing);
    nlohmann::json wrong_type = good;
    wrong_type[field] = nlohmann::json::array({1, 2});
    hostile.push_back(wrong_type);
  }
  nlohmann::json huge = good;
  huge["mc"] = 1e300;
  hostile.push_back(huge);
  nlohmann::json overflow = good;
  overflow["kc"] = std::int64_t{1} << 40;
  hostile.push_back(overflow);
  nlohmann::json numeric_order = good;
  numeric_order["tile_order"] = 1;
  hostile.push_back(numeric_order);
  nlohmann::json unknown_isa = good;
  unknown_isa["isa"] = "avx1024";
  hostile.push_back(unknown_isa);
  for (const auto& json : hostile) {
    auto config = KernelConfigFromJson(json);
    EXPECT_FALSE(config.ok()) << json.dump();
  }
}

TEST(CacheBudgetTest, UsesPerCoreShares) {
  auto topology = LoadSyntheticTopology(
      "pack:1 l3:1(size=33554432) l2:4(size=1048576) l1d:1(size=49152) core:1 pu:1");
  ASSERT_TRUE(topology.ok());
  const CacheBudget budget = CacheBudgetOf(*topology);
  EXPECT_EQ(budget.l1d, 49152u);
  EXPECT_EQ(budget.l2, 1048576u);
  EXPECT_EQ(budget.l3_per_core, 33554432u / 4);
}

}  // namespace
}  // namespace mmtune
