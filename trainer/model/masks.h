// Attention masks (paper, section 3.2.3): padding is attended by no one, and
// the decoder's self-attention sees no later position.
//
// make_*_mask build the boolean form, true = may attend, with a size-1 head
// dimension that broadcasts against the scores [B, h, T_q, T_k].
// AttentionMask is what the attention layers take: built once per batch,
// passed to every layer, in the forms both attention kernels want.
#pragma once
#include <memory>

#include <torch/torch.h>

namespace model {

// Hide source padding: [B, S] -> [B, 1, 1, S].
torch::Tensor make_src_mask(const torch::Tensor& src, int64_t pad);

// Position i may attend to positions j <= i: lower triangular [1, 1, T, T].
torch::Tensor subsequent_mask(int64_t size, torch::Device device = torch::kCPU);

// Target padding and the future together: [B, T] -> [B, 1, T, T].
torch::Tensor make_tgt_mask(const torch::Tensor& tgt, int64_t pad);

// Which keys each query may attend to: a bool `keep`, broadcastable to the
// scores [B, h, Tq, Tk], true = may attend; or causal: query i sees key j
// only when j <= i (Tq = Tk); or every key (empty).
// The explicit kernel masks its scores with keep_all(). The fused one
// (scaled_dot_product_attention) takes causal as its is_causal flag, which
// needs no mask tensor and lets it run FlashAttention, and `keep` as an
// additive bias of the queries' dtype (0 or lowest_finite), made once by bias() and
// shared by every layer and every copy of this mask; given a bool mask
// instead it converts it, and pads the copy's rows to 8 elements for its
// memory-efficient kernel, in every call (ATen's attention.cpp:
// convert_boolean_attn_mask, preprocess_mask).
class AttentionMask {
 public:
  AttentionMask() = default;          // every key visible
  AttentionMask(torch::Tensor keep);  // NOLINT(runtime/explicit): a bool mask is a mask
  static AttentionMask causal();

  bool is_causal() const { return causal_; }
  bool empty() const { return !keep_.defined() && !causal_; }
  // The mask as one bool tensor broadcastable to `scores` [B, h, Tq, Tk]
  // (undefined when empty); the causal one is made once and cached.
  torch::Tensor keep_all(const torch::Tensor& scores) const;
  // `keep` as an additive bias of `dtype` on its device, rows padded in
  // memory to 8 elements (undefined for a causal or empty mask); made once per dtype.
  torch::Tensor bias(torch::ScalarType dtype) const;

 private:
  struct Derived {  // forms made on first use, shared by copies
    torch::Tensor keep_all, bias;
  };
  torch::Tensor keep_;
  bool causal_ = false;
  std::shared_ptr<Derived> derived_ = std::make_shared<Derived>();
};

// A batch's masks for training and scoring (right-padded rows):
//   source: hides source padding, or nothing when no row is padded
//           (`padded`: the batch has pad tokens; known on the host);
//   target: causal only. A real target position i never sees a pad, since
//           every pad of its row comes after i; what pad positions compute is
//           seen only by later pad positions and never by the loss, which
//           skips pad targets.
AttentionMask source_mask(const torch::Tensor& src, int64_t pad, bool padded);
AttentionMask target_mask();

// What a hidden key's score becomes: the most negative finite value of the
// scores' dtype, not -inf: exp() still makes it 0, a fully hidden row stays
// finite, it fits half precision (-1e9 would not), and cuDNN's attention,
// which mishandles -inf in a bias (ATen gives it finite ones for this
// reason: convert_boolean_attn_mask_cudnn), takes it as the other kernels do.
double lowest_finite(torch::ScalarType dtype);

}  // namespace model
