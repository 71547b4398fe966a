// The opcodes of Python's pickle protocols 0 to 5 (Lib/pickletools.py lists them), each with what this
// reader does with it: the plain-data ones it reads, the ones that import or call code it refuses as such,
// the rest (text forms of protocol 0, sets, out-of-band buffers) it does not read.
#pragma once

#include <cstdint>
#include <string_view>

namespace gpumemtrace::pytorch {

enum class Op : uint8_t {
  Mark = '(',
  Stop = '.',
  Pop = '0',
  PopMark = '1',
  Dup = '2',
  Float = 'F',
  Int = 'I',
  BinInt = 'J',
  BinInt1 = 'K',
  Long = 'L',
  BinInt2 = 'M',
  None = 'N',
  PersId = 'P',
  BinPersId = 'Q',
  Reduce = 'R',
  String = 'S',
  BinString = 'T',
  ShortBinString = 'U',
  Unicode = 'V',
  BinUnicode = 'X',
  Append = 'a',
  Build = 'b',
  Global = 'c',
  Dict = 'd',
  EmptyDict = '}',
  Appends = 'e',
  Get = 'g',
  BinGet = 'h',
  Inst = 'i',
  LongBinGet = 'j',
  List = 'l',
  EmptyList = ']',
  Obj = 'o',
  Put = 'p',
  BinPut = 'q',
  LongBinPut = 'r',
  SetItem = 's',
  Tuple = 't',
  EmptyTuple = ')',
  SetItems = 'u',
  BinFloat = 'G',
  Proto = 0x80,
  NewObj = 0x81,
  Ext1 = 0x82,
  Ext2 = 0x83,
  Ext4 = 0x84,
  Tuple1 = 0x85,
  Tuple2 = 0x86,
  Tuple3 = 0x87,
  NewTrue = 0x88,
  NewFalse = 0x89,
  Long1 = 0x8a,
  Long4 = 0x8b,
  BinBytes = 'B',
  ShortBinBytes = 'C',
  ShortBinUnicode = 0x8c,
  BinUnicode8 = 0x8d,
  BinBytes8 = 0x8e,
  EmptySet = 0x8f,
  AddItems = 0x90,
  FrozenSet = 0x91,
  NewObjEx = 0x92,
  StackGlobal = 0x93,
  Memoize = 0x94,
  Frame = 0x95,
  ByteArray8 = 0x96,
  NextBuffer = 0x97,
  ReadonlyBuffer = 0x98,
};

enum class OpUse : uint8_t {
  Data,         // read
  Code,         // imports or calls code: refused as such
  Unsupported,  // plain, but not a form snapshots use: refused
};

struct OpInfo {
  Op op;
  std::string_view name;  // pickletools' name
  OpUse use;
};

inline constexpr OpInfo kOps[] = {
    {Op::Mark, "MARK", OpUse::Data},
    {Op::Stop, "STOP", OpUse::Data},
    {Op::Pop, "POP", OpUse::Data},
    {Op::PopMark, "POP_MARK", OpUse::Data},
    {Op::Dup, "DUP", OpUse::Data},
    {Op::Float, "FLOAT", OpUse::Unsupported},
    {Op::Int, "INT", OpUse::Unsupported},
    {Op::BinInt, "BININT", OpUse::Data},
    {Op::BinInt1, "BININT1", OpUse::Data},
    {Op::Long, "LONG", OpUse::Unsupported},
    {Op::BinInt2, "BININT2", OpUse::Data},
    {Op::None, "NONE", OpUse::Data},
    {Op::PersId, "PERSID", OpUse::Code},
    {Op::BinPersId, "BINPERSID", OpUse::Code},
    {Op::Reduce, "REDUCE", OpUse::Code},
    {Op::String, "STRING", OpUse::Unsupported},
    {Op::BinString, "BINSTRING", OpUse::Data},
    {Op::ShortBinString, "SHORT_BINSTRING", OpUse::Data},
    {Op::Unicode, "UNICODE", OpUse::Unsupported},
    {Op::BinUnicode, "BINUNICODE", OpUse::Data},
    {Op::Append, "APPEND", OpUse::Data},
    {Op::Build, "BUILD", OpUse::Code},
    {Op::Global, "GLOBAL", OpUse::Code},
    {Op::Dict, "DICT", OpUse::Data},
    {Op::EmptyDict, "EMPTY_DICT", OpUse::Data},
    {Op::Appends, "APPENDS", OpUse::Data},
    {Op::Get, "GET", OpUse::Unsupported},
    {Op::BinGet, "BINGET", OpUse::Data},
    {Op::Inst, "INST", OpUse::Code},
    {Op::LongBinGet, "LONG_BINGET", OpUse::Data},
    {Op::List, "LIST", OpUse::Data},
    {Op::EmptyList, "EMPTY_LIST", OpUse::Data},
    {Op::Obj, "OBJ", OpUse::Code},
    {Op::Put, "PUT", OpUse::Unsupported},
    {Op::BinPut, "BINPUT", OpUse::Data},
    {Op::LongBinPut, "LONG_BINPUT", OpUse::Data},
    {Op::SetItem, "SETITEM", OpUse::Data},
    {Op::Tuple, "TUPLE", OpUse::Data},
    {Op::EmptyTuple, "EMPTY_TUPLE", OpUse::Data},
    {Op::SetItems, "SETITEMS", OpUse::Data},
    {Op::BinFloat, "BINFLOAT", OpUse::Data},
    {Op::Proto, "PROTO", OpUse::Data},
    {Op::NewObj, "NEWOBJ", OpUse::Code},
    {Op::Ext1, "EXT1", OpUse::Code},
    {Op::Ext2, "EXT2", OpUse::Code},
    {Op::Ext4, "EXT4", OpUse::Code},
    {Op::Tuple1, "TUPLE1", OpUse::Data},
    {Op::Tuple2, "TUPLE2", OpUse::Data},
    {Op::Tuple3, "TUPLE3", OpUse::Data},
    {Op::NewTrue, "NEWTRUE", OpUse::Data},
    {Op::NewFalse, "NEWFALSE", OpUse::Data},
    {Op::Long1, "LONG1", OpUse::Data},
    {Op::Long4, "LONG4", OpUse::Data},
    {Op::BinBytes, "BINBYTES", OpUse::Data},
    {Op::ShortBinBytes, "SHORT_BINBYTES", OpUse::Data},
    {Op::ShortBinUnicode, "SHORT_BINUNICODE", OpUse::Data},
    {Op::BinUnicode8, "BINUNICODE8", OpUse::Data},
    {Op::BinBytes8, "BINBYTES8", OpUse::Data},
    {Op::EmptySet, "EMPTY_SET", OpUse::Unsupported},
    {Op::AddItems, "ADDITEMS", OpUse::Unsupported},
    {Op::FrozenSet, "FROZENSET", OpUse::Unsupported},
    {Op::NewObjEx, "NEWOBJ_EX", OpUse::Code},
    {Op::StackGlobal, "STACK_GLOBAL", OpUse::Code},
    {Op::Memoize, "MEMOIZE", OpUse::Data},
    {Op::Frame, "FRAME", OpUse::Data},
    {Op::ByteArray8, "BYTEARRAY8", OpUse::Data},
    {Op::NextBuffer, "NEXT_BUFFER", OpUse::Unsupported},
    {Op::ReadonlyBuffer, "READONLY_BUFFER", OpUse::Unsupported},
};

// The opcode of a byte, or nullptr when no protocol has it.
constexpr const OpInfo* find_op(uint8_t byte) {
  for (const OpInfo& info : kOps)
    if (static_cast<uint8_t>(info.op) == byte) return &info;
  return nullptr;
}

}  // namespace gpumemtrace::pytorch
