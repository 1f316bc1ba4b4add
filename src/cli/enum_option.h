// cli/enum_option.h: an option whose value is an enum, read through the enum's one name
// table (sandbox/enum_names.h): the words on the command line are the words in files, and
// a word not in the table is CLI11's error naming the accepted ones.
#pragma once

#include <CLI/CLI.hpp>
#include <iterator>
#include <map>
#include <string>

#include "sandbox/enum_names.h"

namespace cli {

template <class E>
CLI::CheckedTransformer enum_words() {
  std::map<std::string, E> words;
  for (size_t i = 0; i < std::size(sandbox::EnumNames<E>::names); ++i)
    words[sandbox::EnumNames<E>::names[i]] = static_cast<E>(i);
  return CLI::CheckedTransformer(words);
}

}  // namespace cli
