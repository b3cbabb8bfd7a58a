// Decoding of PNG (libpng) and JPEG (libjpeg-turbo) files into 8-bit grey or RGB pixels.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace cbt {

struct DecodedImage {
  int64_t channels = 0, height = 0, width = 0;
  std::vector<uint8_t> pixels;  // (H, W, C) interleaved, as the libraries write them
};

// The file's own colour kind: 1 for grey (with or without alpha), 3 otherwise. Reads only the
// header. UserError naming the file when it is neither a PNG nor a JPEG image.
int64_t image_channels(const std::string& path);

// Decodes `path` (PNG or JPEG, told apart by their signatures) to `channels` (1: grey, 3:
// RGB) 8-bit channels: grey is repeated into RGB, RGB becomes grey by the Rec. 601 luma
// (0.299 R + 0.587 G + 0.114 B); alpha is dropped (composited onto black). UserError naming
// the file when it is corrupt or of another kind.
DecodedImage decode_image(const std::string& path, int64_t channels);

}  // namespace cbt
