// PNG through libpng's simplified API; JPEG through libjpeg's decompressor with an error
// handler that returns to the caller (libjpeg's default one exits the process).
#include "runtime/image_decode.h"

#include <png.h>
#include <stdio.h>
// jpeglib.h needs FILE and size_t declared first.
#include <jpeglib.h>

#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "graph/errors.h"

namespace cbt {

namespace {

enum class ImageKind { Png, Jpeg };

std::vector<uint8_t> read_file(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) throw UserError("image file not found: " + path);
  std::ifstream f(path, std::ios::binary);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (!f.good() && !f.eof()) throw UserError("cannot read image file " + path);
  return bytes;
}

ImageKind kind_of(const std::vector<uint8_t>& b, const std::string& path) {
  static const uint8_t png_sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  if (b.size() >= 8 && std::memcmp(b.data(), png_sig, 8) == 0) return ImageKind::Png;
  if (b.size() >= 3 && b[0] == 0xff && b[1] == 0xd8 && b[2] == 0xff) return ImageKind::Jpeg;
  throw UserError("image file " + path + " is neither a PNG nor a JPEG image");
}

// --- PNG ---------------------------------------------------------------------------------

struct PngImage {
  png_image img;
  PngImage() {
    std::memset(&img, 0, sizeof img);
    img.version = PNG_IMAGE_VERSION;
  }
  ~PngImage() { png_image_free(&img); }
  PngImage(const PngImage&) = delete;
  PngImage& operator=(const PngImage&) = delete;
};

void begin_png(PngImage& p, const std::vector<uint8_t>& bytes, const std::string& path) {
  if (!png_image_begin_read_from_memory(&p.img, bytes.data(), bytes.size()))
    throw UserError("image file " + path + " is not a valid PNG image (" + p.img.message + ")");
}

DecodedImage decode_png(const std::vector<uint8_t>& bytes, const std::string& path) {
  PngImage p;
  begin_png(p, bytes, path);
  DecodedImage out;
  // The file's own kind (grey or colour; palette, 16-bit and alpha are converted by libpng).
  out.channels = (p.img.format & PNG_FORMAT_FLAG_COLOR) ? 3 : 1;
  p.img.format = out.channels == 3 ? PNG_FORMAT_RGB : PNG_FORMAT_GRAY;
  out.height = p.img.height;
  out.width = p.img.width;
  if (out.height * out.width > (int64_t{1} << 28))
    throw UserError("image file " + path + " is too large (" + std::to_string(out.width) + "x" +
                    std::to_string(out.height) + ")");
  out.pixels.assign(PNG_IMAGE_SIZE(p.img), 0);  // zeros: alpha composites onto black
  if (!png_image_finish_read(&p.img, nullptr, out.pixels.data(), 0, nullptr))
    throw UserError("image file " + path + " is not a valid PNG image (" + p.img.message + ")");
  return out;
}

// --- JPEG --------------------------------------------------------------------------------

struct JpegError {
  jpeg_error_mgr mgr;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

void jpeg_error_exit(j_common_ptr cinfo) {
  auto* err = reinterpret_cast<JpegError*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, err->message);
  std::longjmp(err->jump, 1);
}

void jpeg_no_output(j_common_ptr) {}  // warnings (e.g. extraneous bytes) are not errors

// Decodes into `out` (its own colour kind when header_only is false); false with
// err.message set on failure. No C++ object is created between setjmp and longjmp.
bool decode_jpeg_into(const std::vector<uint8_t>& bytes, DecodedImage& out, bool header_only, JpegError& err) {
  jpeg_decompress_struct cinfo;
  cinfo.err = jpeg_std_error(&err.mgr);
  err.mgr.error_exit = jpeg_error_exit;
  err.mgr.output_message = jpeg_no_output;
  if (setjmp(err.jump)) {
    jpeg_destroy_decompress(&cinfo);
    return false;
  }
  jpeg_create_decompress(&cinfo);
  jpeg_mem_src(&cinfo, bytes.data(), static_cast<unsigned long>(bytes.size()));
  jpeg_read_header(&cinfo, TRUE);
  out.channels = cinfo.num_components == 1 ? 1 : 3;
  out.height = cinfo.image_height;
  out.width = cinfo.image_width;
  if (out.height * out.width > (int64_t{1} << 28)) {
    std::snprintf(err.message, sizeof err.message, "%lldx%lld pixels is too large", static_cast<long long>(out.width),
                  static_cast<long long>(out.height));
    jpeg_destroy_decompress(&cinfo);
    return false;
  }
  if (!header_only) {
    cinfo.out_color_space = out.channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
    jpeg_start_decompress(&cinfo);
    const size_t row = static_cast<size_t>(cinfo.output_width) * cinfo.output_components;
    out.pixels.assign(row * cinfo.output_height, 0);
    while (cinfo.output_scanline < cinfo.output_height) {
      JSAMPROW r = out.pixels.data() + row * cinfo.output_scanline;
      jpeg_read_scanlines(&cinfo, &r, 1);
    }
    jpeg_finish_decompress(&cinfo);
  }
  jpeg_destroy_decompress(&cinfo);
  return true;
}

DecodedImage decode_jpeg(const std::vector<uint8_t>& bytes, const std::string& path, bool header_only) {
  DecodedImage out;
  JpegError err;
  if (!decode_jpeg_into(bytes, out, header_only, err))
    throw UserError("image file " + path + " is not a valid JPEG image (" + err.message + ")");
  return out;
}

}  // namespace

int64_t image_channels(const std::string& path) {
  const auto bytes = read_file(path);
  if (kind_of(bytes, path) == ImageKind::Png) {
    PngImage p;
    begin_png(p, bytes, path);
    return (p.img.format & PNG_FORMAT_FLAG_COLOR) ? 3 : 1;
  }
  return decode_jpeg(bytes, path, true).channels;
}

DecodedImage decode_image(const std::string& path, int64_t channels) {
  const auto bytes = read_file(path);
  DecodedImage img = kind_of(bytes, path) == ImageKind::Png ? decode_png(bytes, path) : decode_jpeg(bytes, path, false);
  if (img.channels == channels) return img;
  const size_t n = static_cast<size_t>(img.height * img.width);
  std::vector<uint8_t> px(n * static_cast<size_t>(channels));
  if (channels == 3) {
    for (size_t i = 0; i < n; ++i) px[3 * i] = px[3 * i + 1] = px[3 * i + 2] = img.pixels[i];
  } else {
    for (size_t i = 0; i < n; ++i) {
      const uint8_t* p = &img.pixels[3 * i];
      px[i] = static_cast<uint8_t>(0.299f * p[0] + 0.587f * p[1] + 0.114f * p[2] + 0.5f);
    }
  }
  img.pixels = std::move(px);
  img.channels = channels;
  return img;
}

}  // namespace cbt
